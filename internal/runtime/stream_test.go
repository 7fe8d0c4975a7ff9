package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/types"
)

// The script commands of streaming statements (TestScripts):
//
//	copy-from [session=S] [tab=C]  first line: COPY ... FROM STDIN; the
//	                               rest: its data (C stands for a tab)
//	copy-to [session=S]            runs COPY ... TO STDOUT, prints the data
//	stream name=N [session=S]      starts SUBSCRIBE or COPY (SUBSCRIBE ...)
//	next name=N [wait=D] [n=K]     prints what the stream's Next returns
//	                               within D (default 5s), K times
//	close name=N                   closes the stream

// streams are the streams a script has started, by name.
type streams map[string]*Result

func errorText(err error) string {
	s := fmt.Sprintf("error (%s): %s\n", errs.SQLState(err), err)
	var e *errs.Error
	if errors.As(err, &e) && e.Where != "" {
		s += "context: " + e.Where + "\n"
	}
	return s
}

func scriptCopyFrom(t *testing.T, s *Session, d *datadriven.TestData) string {
	stmt, data, _ := strings.Cut(d.Input, "\n")
	if d.HasArg("tab") {
		var c string
		d.ScanArgs(t, "tab", &c)
		data = strings.ReplaceAll(data, c, "\t")
	}
	if data != "" && !d.HasArg("noeol") {
		data += "\n"
	}
	ctx := context.Background()
	res, err := s.Exec(ctx, stmt, nil)
	if err != nil {
		return errorText(err)
	}
	if res.CopyIn == nil {
		t.Fatalf("%s: no CopyIn", stmt)
	}
	res, err = s.CopyFrom(ctx, res.CopyIn, strings.NewReader(data))
	if err != nil {
		return errorText(err)
	}
	return res.Tag + "\n"
}

func scriptCopyTo(t *testing.T, s *Session, d *datadriven.TestData) string {
	res, err := s.Exec(context.Background(), d.Input, nil)
	if err != nil {
		return errorText(err)
	}
	out := res.CopyOut
	if out == nil {
		t.Fatalf("%s: no CopyOut", d.Input)
	}
	defer out.Close()
	var b strings.Builder
	for {
		p, err := out.Next(context.Background())
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.String() + errorText(err)
		}
		writePayload(&b, out, p)
	}
	return b.String() + out.Tag() + "\n"
}

func writePayload(b *strings.Builder, out *CopyOut, p []byte) {
	if out.Binary {
		fmt.Fprintf(b, "%q\n", p)
	} else {
		b.Write(p)
	}
}

func scriptStream(t *testing.T, s *Session, st streams, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	res, err := s.Exec(context.Background(), d.Input, nil)
	if err != nil {
		return errorText(err)
	}
	st[name] = res
	if res.Subscription != nil {
		return columnLine(res.Columns)
	}
	return "copy out\n"
}

func columnLine(cols []Column) string {
	var names []string
	for _, c := range cols {
		names = append(names, c.Name+":"+c.Type.String())
	}
	return strings.Join(names, " | ") + "\n"
}

func rowLine(vals []types.Value, _ []Column) string {
	var out []string
	for _, v := range vals {
		if v.IsNull() {
			out = append(out, "NULL")
		} else {
			// Format's text depends on the value alone.
			out = append(out, types.Format(v, types.Type{}))
		}
	}
	return strings.Join(out, " | ") + "\n"
}

func scriptNext(t *testing.T, st streams, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	res := st[name]
	if res == nil {
		t.Fatalf("no stream %q", name)
	}
	wait := 5 * time.Second
	if d.HasArg("wait") {
		var w string
		d.ScanArgs(t, "wait", &w)
		var err error
		if wait, err = time.ParseDuration(w); err != nil {
			t.Fatal(err)
		}
	}
	n := 1
	if d.HasArg("n") {
		d.ScanArgs(t, "n", &n)
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		if sub := res.Subscription; sub != nil {
			rows, err := sub.Next(ctx)
			cancel()
			if !writeNextError(&b, err, wait) {
				break
			}
			for _, r := range rows {
				b.WriteString(rowLine(r, res.Columns))
			}
			continue
		}
		p, err := res.CopyOut.Next(ctx)
		cancel()
		if !writeNextError(&b, err, wait) {
			break
		}
		writePayload(&b, res.CopyOut, p)
	}
	return b.String()
}

// writeNextError describes Next's error and reports whether there was
// none.
func writeNextError(b *strings.Builder, err error, wait time.Duration) bool {
	switch {
	case err == nil:
		return true
	case err == io.EOF:
		b.WriteString("EOF\n")
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(b, "(nothing within %s)\n", wait)
	default:
		b.WriteString(errorText(err))
	}
	return false
}

func scriptClose(t *testing.T, st streams, d *datadriven.TestData) string {
	var name string
	d.ScanArgs(t, "name", &name)
	res := st[name]
	if res == nil {
		t.Fatalf("no stream %q", name)
	}
	if res.Subscription != nil {
		res.Subscription.Close()
	} else {
		res.CopyOut.Close()
	}

	return "closed\n"
}

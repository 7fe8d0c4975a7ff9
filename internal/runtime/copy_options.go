package runtime

import (
	"fmt"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"github.com/rockstream/rockstream/internal/copyfmt"
	"github.com/rockstream/rockstream/internal/errs"
)

// copyOptions converts a COPY statement's options to copyfmt's, for data
// of the named columns.
func copyOptions(defs []*pg.Node, cols []string, from bool) (copyfmt.Options, error) {
	var o copyfmt.Options
	seen := map[string]bool{}
	for _, n := range defs {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		if seen[d.Defname] {
			return o, errs.New(errs.SyntaxError, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		switch d.Defname {
		case "format":
			switch f := defString(d); f {
			case "text":
				o.Format = copyfmt.Text
			case "csv":
				o.Format = copyfmt.CSV
			case "binary":
				o.Format = copyfmt.Binary
			default:
				return o, errs.Newf(errs.InvalidParameterValue, "COPY format %q not recognized", f)
			}
			o.Set.Format = true
		case "delimiter":
			v := defString(d)
			if len(v) != 1 {
				return o, errs.New(errs.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
			}
			o.Delimiter, o.Set.Delimiter = v[0], true
		case "null":
			o.Null, o.Set.Null = defString(d), true
		case "header":
			h, err := defHeader(d)
			if err != nil {
				return o, err
			}
			o.Header, o.Set.Header = h, true
		case "quote":
			v := defString(d)
			if len(v) != 1 {
				return o, errs.New(errs.FeatureNotSupported, "COPY quote must be a single one-byte character")
			}
			o.Quote, o.Set.Quote = v[0], true
		case "escape":
			v := defString(d)
			if len(v) != 1 {
				return o, errs.New(errs.FeatureNotSupported, "COPY escape must be a single one-byte character")
			}
			o.Escape, o.Set.Escape = v[0], true
		case "force_quote":
			if d.Arg.GetAStar() != nil {
				o.ForceQuoteAll = true
			} else {
				flags, err := forceColumns(d, cols)
				if err != nil {
					return o, err
				}
				o.ForceQuote = flags
			}
			o.Set.ForceQuote = true
		case "force_not_null":
			flags, err := forceColumns(d, cols)
			if err != nil {
				return o, err
			}
			o.ForceNotNull, o.Set.ForceNotNull = flags, true
		case "force_null":
			flags, err := forceColumns(d, cols)
			if err != nil {
				return o, err
			}
			o.ForceNull, o.Set.ForceNull = flags, true
		case "encoding":
			if e := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(defString(d))); e != "utf8" && e != "unicode" {
				return o, errs.Newf(errs.FeatureNotSupported, "COPY encoding %q is not supported; data is UTF8", defString(d))
			}
		case "freeze":
			// An optimisation hint in PostgreSQL; nothing to do here.
		default:
			return o, errs.Newf(errs.SyntaxError, "option %q not recognized", d.Defname)
		}
	}
	return o, o.Normalize(from)
}

// defString returns an option's argument as text.
func defString(d *pg.DefElem) string {
	switch a := d.Arg; {
	case a == nil:
		return ""
	case a.GetString_() != nil:
		return a.GetString_().Sval
	case a.GetInteger() != nil:
		return fmt.Sprint(a.GetInteger().Ival)
	case a.GetBoolean() != nil:
		if a.GetBoolean().Boolval {
			return "true"
		}
		return "false"
	}
	return ""
}

// defHeader reads HEADER's argument: a Boolean or "match".
func defHeader(d *pg.DefElem) (copyfmt.Header, error) {
	if d.Arg == nil {
		return copyfmt.HeaderLine, nil
	}
	if i := d.Arg.GetInteger(); i != nil {
		switch i.Ival {
		case 0:
			return copyfmt.NoHeader, nil
		case 1:
			return copyfmt.HeaderLine, nil
		}
	} else {
		switch strings.ToLower(defString(d)) {
		case "true", "on", "t", "tr", "tru", "yes", "y", "ye", "1":
			return copyfmt.HeaderLine, nil
		case "false", "off", "of", "f", "fa", "fal", "fals", "no", "n", "0":
			return copyfmt.NoHeader, nil
		case "match":
			return copyfmt.HeaderMatch, nil
		}
	}
	return 0, errs.Newf(errs.InvalidParameterValue, "%s requires a Boolean value or \"match\"", d.Defname)
}

// forceColumns resolves a FORCE_* column list to per-column flags.
func forceColumns(d *pg.DefElem, cols []string) ([]bool, error) {
	flags := make([]bool, len(cols))
	for _, n := range d.Arg.GetList().GetItems() {
		name := n.GetString_().GetSval()
		found := false
		for i, c := range cols {
			if c == name {
				flags[i], found = true, true
			}
		}
		if !found {
			return nil, errs.Newf(errs.InvalidColumnRef, "%s column %q not referenced by COPY", strings.ToUpper(d.Defname), name)
		}
	}
	return flags, nil
}

package control

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// startEtcd runs an embedded etcd in a temporary directory for the test.
// Its short raft timing lets it grant one-second leases.
func startEtcd(t *testing.T) *Embedded {
	t.Helper()
	e, err := StartEmbedded(EmbedConfig{Dir: t.TempDir(), Tick: 10 * time.Millisecond, Election: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

func connect(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := Connect(context.Background(), endpoints, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestEtcdLogsGoToSlogAtTheirLevel(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	quiet := ZapLogger(logger, nil)
	quiet.Info("chatty")
	quiet.Warn("chattier")
	quiet.Error("broken", zap.String("member", "m1"))
	verbose := ZapLogger(logger, slog.LevelInfo)
	verbose.Info("shown")
	verbose.Debug("hidden")
	out := buf.String()
	for _, want := range []string{"msg=broken", "member=m1", "component=etcd", "msg=shown"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"chatty", "chattier", "hidden"} {
		if strings.Contains(out, not) {
			t.Errorf("log has %q:\n%s", not, out)
		}
	}
}

func TestEmbeddedServesAndStops(t *testing.T) {
	dir := t.TempDir()
	e, err := StartEmbedded(EmbedConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	cli := connect(t, e.Endpoints())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "/k", "v"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	// Restarted on the same directory, it still holds the key.
	e, err = StartEmbedded(EmbedConfig{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cli2 := connect(t, e.Endpoints())
	resp, err := cli2.Get(ctx, "/k")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v" {
		t.Fatalf("after a restart: %v, %v", resp, err)
	}
}

// proxy is a TCP proxy on loopback whose connections the test can cut,
// as a network partition between one client and etcd.
type proxy struct {
	l      net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l, target: target}
	t.Cleanup(func() { l.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *proxy) endpoint() string { return "http://" + p.l.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go pipe(c, up)
		go pipe(up, c)
	}
}

func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
}

// setCut closes every connection and refuses new ones while cut.
func (p *proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}

package control

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// EmbedConfig configures a single-node etcd embedded in this process.
type EmbedConfig struct {
	// Dir is etcd's data directory; it is created if absent and reused on
	// a restart.
	Dir string
	// Name is the member's name; "control" if empty.
	Name string
	// ClientPort and PeerPort are the loopback ports etcd listens on; 0
	// picks free ports.
	ClientPort, PeerPort int
	// Logger receives etcd's log lines at LogLevel or above; nil discards
	// them.
	Logger *slog.Logger
	// LogLevel is the least level passed on; nil means slog.LevelError, so
	// that etcd is quiet by default.
	LogLevel slog.Leveler
	// Tick and Election are raft's heartbeat interval and election
	// timeout; zero means 100 ms and 1 s, etcd's defaults. They bound the
	// least lease TTL etcd grants: 1.5 elections, rounded up to seconds.
	Tick, Election time.Duration
	// ReadyTimeout bounds the wait for the server to serve; zero means 30 s.
	ReadyTimeout time.Duration
}

// Embedded is a running embedded etcd.
type Embedded struct {
	etcd      *embed.Etcd
	endpoints []string
}

// StartEmbedded starts a single-node etcd on loopback and returns once it
// serves clients.
func StartEmbedded(cfg EmbedConfig) (*Embedded, error) {
	var lastErr error
	// A port picked free may be taken before etcd binds it; try again
	// with new ones.
	for attempt := 0; attempt < 3; attempt++ {
		e, err := startEmbedded(cfg)
		if err == nil {
			return e, nil
		}
		lastErr = err
		if cfg.ClientPort != 0 && cfg.PeerPort != 0 || !isAddrInUse(err) {
			break
		}
	}
	return nil, lastErr
}

func startEmbedded(cfg EmbedConfig) (*Embedded, error) {
	ec := embed.NewConfig()
	ec.Dir = cfg.Dir
	ec.Name = cfg.Name
	if ec.Name == "" {
		ec.Name = "control"
	}
	clientPort, peerPort := cfg.ClientPort, cfg.PeerPort
	var err error
	if clientPort == 0 {
		if clientPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	if peerPort == 0 {
		if peerPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	curl := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	purl := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	ec.ListenClientUrls, ec.AdvertiseClientUrls = []url.URL{curl}, []url.URL{curl}
	ec.ListenPeerUrls, ec.AdvertisePeerUrls = []url.URL{purl}, []url.URL{purl}
	ec.InitialCluster = ec.InitialClusterFromName(ec.Name)
	ec.ListenMetricsUrls = nil
	if cfg.Tick > 0 {
		ec.TickMs = uint(cfg.Tick / time.Millisecond)
	}
	if cfg.Election > 0 {
		ec.ElectionMs = uint(cfg.Election / time.Millisecond)
	}
	ec.Logger = "zap"
	ec.ZapLoggerBuilder = embed.NewZapLoggerBuilder(ZapLogger(cfg.Logger, cfg.LogLevel))
	e, err := embed.StartEtcd(ec)
	if err != nil {
		return nil, fmt.Errorf("control: start embedded etcd in %s: %w", cfg.Dir, err)
	}
	timeout := cfg.ReadyTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("control: embedded etcd failed: %w", err)
	case <-time.After(timeout):
		e.Close()
		return nil, fmt.Errorf("control: embedded etcd not ready after %s", timeout)
	}
	return &Embedded{etcd: e, endpoints: []string{curl.String()}}, nil
}

// Endpoints are the client URLs of the embedded etcd.
func (e *Embedded) Endpoints() []string { return e.endpoints }

// Close stops the server and waits until it has stopped.
func (e *Embedded) Close() {
	e.etcd.Close()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("control: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func isAddrInUse(err error) bool {
	return err != nil && strings.Contains(err.Error(), "address already in use")
}

// Connect returns a client of the etcd cluster at endpoints (an external
// cluster, or Embedded.Endpoints). Its log lines go to logger at level or
// above, as for the embedded server.
func Connect(ctx context.Context, endpoints []string, logger *slog.Logger, level slog.Leveler) (*clientv3.Client, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("control: no etcd endpoints")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 5 * time.Second,
		Logger:      ZapLogger(logger, level),
		Context:     ctx,
		// Keep a dead connection from hanging requests past their timeout.
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
	})
	if err != nil {
		return nil, fmt.Errorf("control: connect to etcd %s: %w", strings.Join(endpoints, ","), err)
	}
	return cli, nil
}

// ZapLogger is a zap logger that passes entries at level or above to
// logger (none if logger is nil). A nil level is slog.LevelError: etcd and
// its client log much at info and warn level that an operator of
// RockStream need not see.
func ZapLogger(logger *slog.Logger, level slog.Leveler) *zap.Logger {
	if logger == nil {
		return zap.NewNop()
	}
	least := slog.LevelError
	if level != nil {
		least = level.Level()
	}
	return zap.New(&slogCore{logger: logger, level: least})
}

// slogCore is a zapcore.Core writing to a slog.Logger.
type slogCore struct {
	logger *slog.Logger
	level  slog.Level
	fields []zapcore.Field
}

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

func (c *slogCore) Enabled(l zapcore.Level) bool { return slogLevel(l) >= c.level }

func (c *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{logger: c.logger, level: c.level, fields: append(append([]zapcore.Field(nil), c.fields...), fields...)}
}

func (c *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range c.fields {
		f.AddTo(enc)
	}
	for _, f := range fields {
		f.AddTo(enc)
	}
	attrs := make([]any, 0, 2*len(enc.Fields)+2)
	attrs = append(attrs, "component", "etcd")
	for k, v := range enc.Fields {
		attrs = append(attrs, k, v)
	}
	c.logger.Log(context.Background(), slogLevel(e.Level), e.Message, attrs...)
	return nil
}

func (c *slogCore) Sync() error { return nil }

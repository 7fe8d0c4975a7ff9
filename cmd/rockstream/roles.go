package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rockstream/rockstream/internal/cluster"
	"github.com/rockstream/rockstream/internal/control"
	"github.com/rockstream/rockstream/internal/runtime"
)

// The cluster roles of `rockstream start` (docs/cluster.md#processes):
// --role control runs etcd (embedded, or joins --etcd) and the
// coordinator; --role worker runs a worker of the protocol's keyed-sum
// workload. --role all, the default, is the single-process server.

// clusterFlags are the flags of the cluster roles.
type clusterFlags struct {
	role            string
	name            string
	etcd            string
	control         string
	nodeID          string
	clusterAddr     string
	etcdPort        int
	etcdPeerPort    int
	leaseTTL        time.Duration
	leaderTTL       time.Duration
	epochInterval   time.Duration
	checkpointEvery uint64
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.role, "role", "all", "what this process runs: `all` (the whole server in one process), control (etcd and the cluster's coordinator) or worker (a worker of the cluster)")
	fs.StringVar(&c.name, "cluster", "rockstream", "with --role control or worker, the cluster's `NAME`: its keys in etcd are under /rockstream/NAME/")
	fs.StringVar(&c.etcd, "etcd", "", "with --role control, join the external etcd at `URL,...` instead of embedding one; with --role worker, the etcd to find the cluster in")
	fs.StringVar(&c.control, "control", "", "with --role worker, the control process's HTTP `ADDR` (host:port), which names the cluster's etcd")
	fs.StringVar(&c.nodeID, "node-id", "", "with --role worker, the worker's `ID` in the cluster (default: the host name)")
	fs.StringVar(&c.clusterAddr, "cluster-addr", "127.0.0.1:0", "with --role control or worker, serve the cluster's gRPC messages on `ADDR` (advertised in etcd as bound; port 0 picks a free port)")
	fs.IntVar(&c.etcdPort, "etcd-port", 2379, "with --role control and no --etcd, the embedded etcd's client `PORT` on 127.0.0.1 (0 picks a free port)")
	fs.IntVar(&c.etcdPeerPort, "etcd-peer-port", 2380, "with --role control and no --etcd, the embedded etcd's peer `PORT` on 127.0.0.1 (0 picks a free port)")
	fs.DurationVar(&c.leaseTTL, "lease-ttl", 3*time.Second, "with --role worker, the lease of its membership in etcd: a worker that cannot renew it stops serving before it ends, and its buckets move to the others after")
	fs.DurationVar(&c.leaderTTL, "leader-ttl", 5*time.Second, "with --role control, the lease of its election session in etcd: a leading control that stops renewing it (killed, stopped, cut off) still leads until it ends, and another control is elected after")
	fs.DurationVar(&c.epochInterval, "epoch-interval", 20*time.Millisecond, "with --role control, the least time between two epochs of the cluster")
	fs.Uint64Var(&c.checkpointEvery, "checkpoint-every", 100, "with --role control, take a barrier checkpoint every `N` epochs (it bounds how much of the input log a reset replays)")
}

// clusterOnly are the flags that only the cluster roles read, and
// roleFlags the flags each cluster role reads besides them.
var (
	clusterOnly = []string{"cluster", "etcd", "control", "node-id", "cluster-addr", "etcd-port", "etcd-peer-port", "lease-ttl", "leader-ttl", "epoch-interval", "checkpoint-every"}
	roleFlags   = map[string][]string{
		"control": {"role", "storage", "http-addr", "log-format", "log-level", "cluster", "etcd", "cluster-addr", "etcd-port", "etcd-peer-port", "leader-ttl", "epoch-interval", "checkpoint-every"},
		"worker":  {"role", "storage", "log-format", "log-level", "cluster", "etcd", "control", "node-id", "cluster-addr", "lease-ttl"},
	}
)

// checkRoleFlags refuses flags given that the role does not read, so that
// none is silently ignored.
func (c *clusterFlags) checkRoleFlags(fs *pflag.FlagSet) error {
	var bad []string
	switch c.role {
	case "all":
		for _, name := range clusterOnly {
			if fs.Changed(name) {
				bad = append(bad, "--"+name)
			}
		}
	case "control", "worker":
		allowed := map[string]bool{}
		for _, name := range roleFlags[c.role] {
			allowed[name] = true
		}
		fs.Visit(func(f *pflag.Flag) {
			if !allowed[f.Name] {
				bad = append(bad, "--"+f.Name)
			}
		})
	default:
		return fmt.Errorf("--role must be all, control or worker, not %q", c.role)
	}
	if len(bad) > 0 {
		return fmt.Errorf("--role %s does not take %s", c.role, strings.Join(bad, ", "))
	}
	switch {
	case c.role == "worker" && c.etcd == "" && c.control == "":
		return errors.New("--role worker needs --control ADDR (the control process's HTTP address) or --etcd URL,...")
	case c.role == "worker" && c.etcd != "" && c.control != "":
		return errors.New("give --control or --etcd, not both")
	case c.leaseTTL < time.Second:
		return errors.New("--lease-ttl must be at least 1s (etcd counts leases in seconds)")
	case c.leaderTTL < time.Second:
		return errors.New("--leader-ttl must be at least 1s (etcd counts leases in seconds)")
	case c.epochInterval <= 0:
		return errors.New("--epoch-interval must be positive")
	}
	if _, err := control.NewKeys(c.name); err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	return nil
}

// roleContext is ctx ended by SIGINT or SIGTERM.
func roleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// auditDecision records a coordinator's decision in the audit log.
func auditDecision(audit *runtime.AuditLog, log *slog.Logger, name string) func(control.Decision) {
	return func(d control.Decision) {
		outcome := "ok"
		if !d.OK {
			outcome = "error"
		}
		detail := d.Detail
		if d.Reading != "" {
			detail += "; reading: " + d.Reading
		}
		ev := runtime.AuditEvent{Role: "coordinator " + name, Kind: "cluster", Object: d.Kind, Outcome: outcome, Detail: detail}
		if err := audit.Append(ev); err != nil {
			log.Error("audit log", "err", err)
		}
		log.Info("coordinator decision", "decision", d.Kind, "revision", int64(d.Revision), "epoch", uint64(d.Epoch), "ok", d.OK)
	}
}

// runControl runs the control role until ctx ends or a signal arrives.
func runControl(ctx context.Context, f startFlags, c clusterFlags, stderr io.Writer) error {
	started := time.Now()
	log, err := newLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return usageError{err}
	}
	if f.store.dir == "" {
		return usageError{errors.New("--role control needs --storage DIR: it keeps etcd's data, the audit log and (without ROCKSTREAM_OBJECT_STORE_BUCKET) the object store there")}
	}
	ctx, stop := roleContext(ctx)
	defer stop()
	keys, _ := control.NewKeys(c.name)
	location, err := control.ObjectStoreLocation(os.Getenv, c.name, filepath.Join(f.store.dir, "objects"))
	if err != nil {
		return usageError{err}
	}
	if f.httpAddr == "" {
		return usageError{errors.New("--role control needs --http-addr: workers and operators reach the cluster through it")}
	}
	httpLn, grpcLn := bind(f.httpAddr, "--http-addr"), bindCluster(c.clusterAddr)
	if httpLn.err != nil || grpcLn.err != nil {
		return usageError{errors.Join(httpLn.err, grpcLn.err)}
	}
	defer httpLn.ln.Close()

	endpoints := splitList(c.etcd)
	if len(endpoints) == 0 {
		emb, err := control.StartEmbedded(control.EmbedConfig{Dir: filepath.Join(f.store.dir, "etcd"),
			ClientPort: c.etcdPort, PeerPort: c.etcdPeerPort, Logger: log})
		if err != nil {
			return usageError{err}
		}
		defer emb.Close()
		endpoints = emb.Endpoints()
	}
	cli, err := control.Connect(ctx, endpoints, log, nil)
	if err != nil {
		return usageError{err}
	}
	defer cli.Close()
	if err := claimObjectStore(ctx, cli, keys, location); err != nil {
		return usageError{err}
	}
	objects, err := control.OpenObjects(ctx, location)
	if err != nil {
		return usageError{err}
	}
	defer objects.Bucket.Close()
	audit, err := runtime.OpenAuditLog(f.store.dir)
	if err != nil {
		return usageError{fmt.Errorf("opening the audit log: %w", err)}
	}
	defer audit.Close()

	net := control.ListenGRPC(grpcLn.ln, cli, control.GRPCNetworkConfig{Keys: keys, Logger: log.With("component", "network")})
	defer net.Close()
	store := control.NewStore(cli, keys, control.StoreConfig{LeaseTTL: c.leaseTTL})
	coord, err := control.NewCoordinatorHost(control.CoordinatorHostConfig{
		Name: net.Addr(), SessionTTL: c.leaderTTL,
		EpochEvery: c.epochInterval, PollEvery: 100 * time.Millisecond, Resend: 100 * time.Millisecond,
		CheckpointEvery: cluster.Epoch(c.checkpointEvery), CommitEvery: 100,
		Logger: log.With("component", "coordinator"), Decide: auditDecision(audit, log, net.Addr()),
	}, cli, store, objects, net)
	if err != nil {
		return usageError{err}
	}
	client := control.NewClient(coord)
	net.Attach(cluster.CoordinatorID, coord.Deliver)
	net.Attach(cluster.ClientID, client.Receive)
	httpAddr := httpLn.ln.Addr().String()
	net.SetStatus(func(bool) any { return controlNode{HTTPAddr: httpAddr} })
	coordDone := make(chan error, 1)
	go func() { coordDone <- coord.Run(ctx) }()

	api := &controlAPI{store: store, objects: objects, client: client, coord: coord, etcd: endpoints, location: location, auditPath: audit.Path(),
		meta: healthMeta{Version: currentVersion().Version, Storage: f.store.dir}, started: started}
	httpSrv := &http.Server{Handler: api.handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(log.With("component", "http").Handler(), slog.LevelWarn)}
	httpDone := make(chan error, 1)
	go func() { httpDone <- httpSrv.Serve(httpLn.ln) }()
	defer httpSrv.Close()
	log.Info("ready", "role", "control", "cluster", c.name, "http_addr", httpLn.ln.Addr().String(),
		"cluster_addr", net.Addr(), "etcd", strings.Join(endpoints, ","), "objects", location)
	select {
	case <-ctx.Done():
	case err := <-httpDone:
		return fmt.Errorf("the HTTP server stopped: %w", err)
	}
	api.stopping.Store(true)
	log.Info("shutting down", "role", "control")
	<-coordDone
	return nil
}

// claimObjectStore records location as the cluster's object store in
// etcd, where workers find it; a cluster that has one elsewhere already
// is refused: its input log and checkpoints are there.
func claimObjectStore(ctx context.Context, cli *clientv3.Client, keys control.Keys, location string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(keys.Objects()), "=", 0)).
		Then(clientv3.OpPut(keys.Objects(), location)).
		Else(clientv3.OpGet(keys.Objects())).Commit()
	if err != nil {
		return fmt.Errorf("recording the object store in etcd: %w", err)
	}
	if !resp.Succeeded {
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 && string(kvs[0].Value) != location {
			return fmt.Errorf("cluster %s keeps its input log and checkpoints in %s, not %s: set ROCKSTREAM_OBJECT_STORE_* (or --storage) as when it was created", keys.Prefix(), kvs[0].Value, location)
		}
	}
	return nil
}

// runWorker runs the worker role until ctx ends, a signal arrives or its
// disk fails.
func runWorker(ctx context.Context, f startFlags, c clusterFlags, stderr io.Writer) error {
	log, err := newLogger(stderr, f.logFormat, f.logLevel)
	if err != nil {
		return usageError{err}
	}
	if f.store.dir == "" {
		return usageError{errors.New("--role worker needs --storage DIR: it keeps its state and prepared record there")}
	}
	id := c.nodeID
	if id == "" {
		if id, err = os.Hostname(); err != nil || id == "" {
			return usageError{errors.New("--role worker needs --node-id: the host has no name")}
		}
	}
	ctx, stop := roleContext(ctx)
	defer stop()
	keys, _ := control.NewKeys(c.name)
	grpcLn := bindCluster(c.clusterAddr)
	if grpcLn.err != nil {
		return usageError{grpcLn.err}
	}
	endpoints := splitList(c.etcd)
	if c.control != "" {
		if endpoints, err = controlEtcd(ctx, c.control); err != nil {
			return usageError{err}
		}
	}
	cli, err := control.Connect(ctx, endpoints, log, nil)
	if err != nil {
		return usageError{err}
	}
	defer cli.Close()
	location, err := waitObjectStore(ctx, cli, keys)
	if err != nil {
		return usageError{err}
	}
	objects, err := control.OpenObjects(ctx, location)
	if err != nil {
		return usageError{err}
	}
	defer objects.Bucket.Close()
	disk, err := control.OpenFileDisk(f.store.dir)
	if err != nil {
		return usageError{err}
	}
	net := control.ListenGRPC(grpcLn.ln, cli, control.GRPCNetworkConfig{Keys: keys, Logger: log.With("component", "network")})
	defer net.Close()
	// The worker's own deadline ends a fifth of the lease before etcd's,
	// the margin for an action begun just before it.
	store := control.NewStore(cli, keys, control.StoreConfig{LeaseTTL: c.leaseTTL, RequestTimeout: c.leaseTTL / 4})
	leases := &leaseLog{log: log}
	wh, err := control.NewWorkerHost(control.WorkerHostConfig{ID: cluster.NodeID(id), LeaseTTL: c.leaseTTL * 4 / 5,
		RenewEvery: c.leaseTTL / 5, Logger: log.With("component", "worker"), Observe: leases.observe}, store, objects, net, disk)
	if err != nil {
		return usageError{err}
	}
	net.Attach(cluster.NodeID(id), wh.Deliver)
	net.SetStatus(func(withState bool) any {
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		st, err := wh.Status(sctx)
		if err != nil {
			return control.WorkerReport{ID: cluster.NodeID(id), Phase: "not answering"}
		}
		return st.Report(cluster.NodeID(id), withState)
	})
	if err := net.Advertise(ctx, cluster.NodeID(id)); err != nil {
		return usageError{err}
	}
	log.Info("ready", "role", "worker", "cluster", c.name, "node_id", id, "cluster_addr", net.Addr(),
		"etcd", strings.Join(endpoints, ","), "objects", location)
	if err := wh.Run(ctx); err != nil {
		return err
	}
	log.Info("shutting down", "role", "worker")
	return nil
}

// leaseLog logs, when a worker's machine leaves a lease (it fenced itself
// or registered anew), how many actions with an effect it performed under
// it and when the last was, so that fencing can be checked from outside.
type leaseLog struct {
	log     *slog.Logger
	lease   cluster.LeaseID
	actions int
	last    time.Time
}

func (l *leaseLog) observe(lease cluster.LeaseID, a cluster.Action) {
	if lease != l.lease {
		if l.lease != 0 {
			l.log.Info("lease left", "lease", fmt.Sprintf("%x", l.lease), "effects", l.actions,
				"last_effect", l.last.UTC().Format(time.RFC3339Nano))
		}
		if lease != 0 {
			l.log.Info("lease held", "lease", fmt.Sprintf("%x", lease))
		}
		l.lease, l.actions, l.last = lease, 0, time.Time{}
	}
	if lease != 0 && control.HasEffect(a) {
		l.actions++
		l.last = time.Now()
	}
}

// controlEtcd asks the control process at addr for the cluster's etcd
// endpoints, retrying for a while: the control may be starting.
func controlEtcd(ctx context.Context, addr string) ([]string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ans struct {
			Endpoints []string `json:"endpoints"`
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		body, err := getServer(rctx, addr, "/cluster/etcd")
		cancel()
		var usage usageError
		switch {
		case errors.As(err, &usage):
			return nil, fmt.Errorf("--control: %w", usage.err)
		case err == nil:
			err = json.Unmarshal(body, &ans)
		}
		if err == nil && len(ans.Endpoints) > 0 {
			return ans.Endpoints, nil
		}
		if err == nil {
			err = errors.New("it names no etcd endpoint")
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("--control %s: %w", addr, err)
		}
		sleepFor(ctx, 200*time.Millisecond)
	}
}

// waitObjectStore reads the cluster's object store location from etcd,
// waiting for the control process to record it.
func waitObjectStore(ctx context.Context, cli *clientv3.Client, keys control.Keys) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := cli.Get(rctx, keys.Objects())
		cancel()
		if err == nil && len(resp.Kvs) == 1 {
			return string(resp.Kvs[0].Value), nil
		}
		if err == nil {
			err = fmt.Errorf("no control process has recorded the object store of %s in etcd", keys.Prefix())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", err
		}
		sleepFor(ctx, 200*time.Millisecond)
	}
}

func sleepFor(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// roleCommandHelp is the part of `rockstream start --help` about roles.
const roleCommandHelp = `
Roles (--role): all, the default, is everything above in one process. The
cluster roles run the cluster's protocol as separate processes
(docs/cluster.md#processes); its workload is still a keyed sum, not SQL:
--role control runs a single-node etcd embedded in --storage DIR (or
joins --etcd URL,...), the coordinator, and on --http-addr the cluster's
endpoints (/health, /cluster/status, /cluster/writes, /admin/audit); its
decisions go to the audit log. Several controls may run on one etcd: one
leads, another is elected within --leader-ttl of its loss. --role worker --control ADDR (or --etcd)
joins the cluster named --cluster, keeps its state in --storage DIR and
serves the cluster's gRPC messages on --cluster-addr. The object store of
the input log and checkpoints is s3://$ROCKSTREAM_OBJECT_STORE_BUCKET/<cluster>
(with ROCKSTREAM_OBJECT_STORE_ENDPOINT, _REGION (default us-east-1),
_ACCESS_KEY_ID, _SECRET_ACCESS_KEY), or without a bucket the directory
objects/ under the control's --storage.`

// runRole runs the role the flags name: the server for "all".
func runRole(cmd *cobra.Command, f startFlags, c clusterFlags) error {
	if err := c.checkRoleFlags(cmd.Flags()); err != nil {
		return usageError{err}
	}
	switch c.role {
	case "control":
		return runControl(cmd.Context(), f, c, cmd.ErrOrStderr())
	case "worker":
		return runWorker(cmd.Context(), f, c, cmd.ErrOrStderr())
	}
	return runServer(cmd.Context(), f, cmd.ErrOrStderr())
}

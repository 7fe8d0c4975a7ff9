package admin

import (
	"embed"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/rockstream/rockstream/internal/errs"
	"github.com/rockstream/rockstream/internal/runtime"
)

// The web console: a page at / (console/index.html, with its script and
// style, embedded in the binary: it loads nothing from elsewhere) that
// polls the JSON endpoints under /api/ and draws what they return. The
// endpoints are read-only (GET only); each answer is read from the
// engine's committed state when asked, like /health. Before the engine
// has recovered they answer 503 with {"error": ...}.

//go:embed console
var consoleFS embed.FS

// consoleFiles serves the console's page, script and style.
var consoleFiles = consoleHandler()

func consoleHandler() http.Handler {
	sub, err := fs.Sub(consoleFS, "console")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		// The page runs only its own script and reads only this server.
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

// registerConsole adds the console's script, style and API to mux (its
// page is /, which Handler routes to consoleFiles).
func (s *Server) registerConsole(mux *http.ServeMux) {
	mux.Handle("GET /console.js", consoleFiles)
	mux.Handle("GET /console.css", consoleFiles)
	mux.HandleFunc("GET /api/overview", s.withEngine(s.apiOverview))
	mux.HandleFunc("GET /api/catalog", s.withEngine(apiCatalog))
	mux.HandleFunc("GET /api/views/{name}", s.withEngine(apiView))
	mux.HandleFunc("GET /api/sessions", s.withEngine(apiSessions))
}

// withEngine runs h with the engine, or answers 503 before it recovered.
func (s *Server) withEngine(h func(eng *runtime.Engine, r *http.Request) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		eng := s.eng.Load()
		if eng == nil {
			WriteJSON(w, http.StatusServiceUnavailable, ActionError{Error: "the server is " + s.status()})
			return
		}
		v, err := h(eng, r)
		if err != nil {
			code := http.StatusInternalServerError
			switch errs.SQLState(err) {
			case "42P01":
				code = http.StatusNotFound
			case "42809":
				code = http.StatusBadRequest
			}
			WriteJSON(w, code, ActionError{Error: err.Error(), SQLState: errs.SQLState(err)})
			return
		}
		WriteJSON(w, http.StatusOK, v)
	}
}

// Overview is the body of /api/overview: the server, its frontier, its
// connectors and its sessions.
type Overview struct {
	Health
	// LastCommit is when the frontier last advanced, and
	// FrontierAgeSeconds how long ago that was.
	LastCommit         time.Time   `json:"last_commit"`
	FrontierAgeSeconds float64     `json:"frontier_age_seconds"`
	Connectors         []Connector `json:"connectors"`
	SessionList        []Session   `json:"session_list"`
}

func (s *Server) apiOverview(eng *runtime.Engine, r *http.Request) (any, error) {
	cat, err := eng.Catalog()
	if err != nil {
		return nil, err
	}
	last := eng.LastCommit()
	ov := Overview{Health: s.health(), LastCommit: last.UTC(), FrontierAgeSeconds: time.Since(last).Seconds(),
		Connectors: connectorsOf(cat), SessionList: sessionsOf(eng)}
	return ov, nil
}

// Catalog is the body of /api/catalog.
type Catalog struct {
	Epoch      uint64      `json:"epoch"`
	Relations  []Relation  `json:"relations"`
	Connectors []Connector `json:"connectors"`
}

// Relation is a table, materialized view or view with its lineage.
type Relation struct {
	Name       string   `json:"name"`
	Kind       string   `json:"kind"`
	Columns    []Column `json:"columns"`
	Definition string   `json:"definition,omitempty"`
	// Reads and ReadBy are the lineage: the relations the definition
	// names, and the views whose definitions name this one.
	Reads   []string `json:"reads"`
	ReadBy  []string `json:"read_by"`
	Sources []string `json:"sources"`
	Sinks   []string `json:"sinks"`
	// Rows, CreatedEpoch and LastChangeEpoch are a materialized view's
	// (null for other relations; LastChangeEpoch null when no change is
	// within the change-log retention).
	Rows            *int64  `json:"rows"`
	CreatedEpoch    *uint64 `json:"created_epoch"`
	LastChangeEpoch *uint64 `json:"last_change_epoch"`
	// FrontierEpoch is the epoch a materialized view is consistent at:
	// views are maintained in the epoch of each change, so it is the
	// committed epoch.
	FrontierEpoch *uint64 `json:"frontier_epoch"`
	// LastChangeAt is when the last epoch that changed a materialized
	// view committed, and LastChangeAgeSeconds how long ago: null when
	// that epoch is older than the server remembers (before start-up,
	// or more than 4,096 epochs ago).
	LastChangeAt         *time.Time `json:"last_change_at"`
	LastChangeAgeSeconds *float64   `json:"last_change_age_seconds"`
}

// Column is one column of a relation.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Connector is a source or sink with its status.
type Connector struct {
	Name string `json:"name"`
	// Kind is "source" or "sink", Type the connector (kafka,
	// postgres-cdc).
	Kind    string `json:"kind"`
	Type    string `json:"type"`
	Target  string `json:"target"`
	Options string `json:"options"`
	State   string `json:"state"`
	// Lag is in records; null when unknown or when no process runs the
	// connector, like the counters.
	Lag        *int64   `json:"lag"`
	Throughput *float64 `json:"throughput"`
	Records    *int64   `json:"records"`
	Errors     *int64   `json:"errors"`
	Failures   *int64   `json:"failures"`
	LastError  string   `json:"last_error,omitempty"`
}

func apiCatalog(eng *runtime.Engine, r *http.Request) (any, error) {
	info, err := eng.Catalog()
	if err != nil {
		return nil, err
	}
	out := Catalog{Epoch: info.Epoch, Relations: []Relation{}, Connectors: connectorsOf(info)}
	for _, ri := range info.Relations {
		rel := Relation{Name: ri.Name, Kind: ri.Kind, Definition: ri.Definition,
			Reads: nonNil(ri.Reads), ReadBy: nonNil(ri.ReadBy), Sources: nonNil(ri.Sources), Sinks: nonNil(ri.Sinks)}
		for _, c := range ri.Columns {
			rel.Columns = append(rel.Columns, Column{Name: c.Name, Type: c.Type})
		}
		if ri.Kind == "materialized view" {
			rows, epoch := ri.Rows, info.Epoch
			rel.Rows, rel.FrontierEpoch = &rows, &epoch
			if ri.Created != 0 {
				created := ri.Created
				rel.CreatedEpoch = &created
			}
			if ri.LastChange != 0 {
				last := ri.LastChange
				rel.LastChangeEpoch = &last
				rel.LastChangeAt, rel.LastChangeAgeSeconds = commitTime(eng, last)
			}
		}
		out.Relations = append(out.Relations, rel)
	}
	return out, nil
}

// commitTime returns when epoch committed and how long ago, or nils when
// the engine does not remember.
func commitTime(eng *runtime.Engine, epoch uint64) (*time.Time, *float64) {
	t, ok := eng.CommitTime(epoch)
	if !ok {
		return nil, nil
	}
	t = t.UTC()
	age := time.Since(t).Seconds()
	return &t, &age
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func connectorsOf(info runtime.CatalogInfo) []Connector {
	out := []Connector{}
	for _, c := range info.Connectors {
		cn := Connector{Name: c.Name, Kind: connectorKind(c), Type: c.Connector, Target: c.Target,
			Options: c.Options, State: c.Status.State, LastError: c.Status.LastError}
		if c.Running {
			st := c.Status
			cn.Throughput, cn.Records, cn.Errors, cn.Failures = &st.Throughput, &st.Records, &st.Errors, &st.Failures
			if st.Lag >= 0 {
				cn.Lag = &st.Lag
			}
		}
		out = append(out, cn)
	}
	return out
}

// ViewCircuit is the body of /api/views/{name}: a materialized view's
// circuit as a graph laid out in layers, data flowing from the scans
// (layer 0) to the view's operator.
type ViewCircuit struct {
	View            string  `json:"view"`
	FrontierEpoch   uint64  `json:"frontier_epoch"`
	LastChangeEpoch *uint64 `json:"last_change_epoch"`
	// LastChangeAt and LastChangeAgeSeconds are as in Relation.
	LastChangeAt         *time.Time `json:"last_change_at"`
	LastChangeAgeSeconds *float64   `json:"last_change_age_seconds"`
	Rows                 int64      `json:"rows"`
	StateKeys            int64      `json:"state_keys"`
	StateBytes           int64      `json:"state_bytes"`
	// StateComplete is false when counting the state stopped at
	// runtime.StateScanLimit keys: the counts are then lower bounds.
	StateComplete bool       `json:"state_complete"`
	Explain       string     `json:"explain"`
	Layers        int        `json:"layers"`
	Operators     []Operator `json:"operators"`
}

// Operator is one node of a circuit's graph.
type Operator struct {
	ID       int    `json:"id"`
	Kind     string `json:"kind"`
	Explain  string `json:"explain"`
	Relation string `json:"relation,omitempty"`
	Inputs   []int  `json:"inputs"`
	// Exchanges, one per input, say how the input moves between workers
	// ("" when it does not).
	Exchanges []string `json:"exchanges"`
	Root      bool     `json:"root"`
	// Rows counts the rows the operator emitted since start-up; the
	// console turns it into rows per second between two polls.
	Rows       uint64 `json:"rows"`
	StateKeys  int64  `json:"state_keys"`
	StateBytes int64  `json:"state_bytes"`
	// Layer and Column place the operator: a scan is in layer 0, any
	// other operator one layer after its deepest input; Column orders the
	// operators of a layer.
	Layer  int `json:"layer"`
	Column int `json:"column"`
}

func apiView(eng *runtime.Engine, r *http.Request) (any, error) {
	c, err := eng.ViewCircuit(r.PathValue("name"))
	if err != nil {
		return nil, err
	}
	out := ViewCircuit{View: c.View, FrontierEpoch: c.Epoch, Rows: c.Rows, StateKeys: c.State.Keys,
		StateBytes: c.State.Bytes, StateComplete: c.Complete, Explain: c.Explain, Operators: []Operator{}}
	if c.LastChange != 0 {
		last := c.LastChange
		out.LastChangeEpoch = &last
		out.LastChangeAt, out.LastChangeAgeSeconds = commitTime(eng, last)
	}
	inputs := make([][]int, len(c.Operators))
	for i, op := range c.Operators {
		inputs[i] = op.Inputs
	}
	layer, column, layers := layout(inputs)
	out.Layers = layers
	for i, op := range c.Operators {
		out.Operators = append(out.Operators, Operator{ID: op.ID, Kind: op.Kind, Explain: op.Explain,
			Relation: op.Relation, Inputs: append([]int{}, op.Inputs...), Exchanges: append([]string{}, op.Exchanges...),
			Root: op.Root, Rows: op.Rows, StateKeys: op.State.Keys, StateBytes: op.State.Bytes,
			Layer: layer[i], Column: column[i]})
	}
	return out, nil
}

// layout places the nodes of a graph whose node i reads inputs[i] (each
// input before the node): layer[i] is 0 for a node without inputs and
// one more than its deepest input's otherwise; column[i] numbers the
// nodes of a layer in id order. It returns the number of layers.
func layout(inputs [][]int) (layer, column []int, layers int) {
	layer, column = make([]int, len(inputs)), make([]int, len(inputs))
	var width []int
	for i, in := range inputs {
		for _, j := range in {
			if j < i && layer[j]+1 > layer[i] {
				layer[i] = layer[j] + 1
			}
		}
		for len(width) <= layer[i] {
			width = append(width, 0)
		}
		column[i] = width[layer[i]]
		width[layer[i]]++
	}
	return layer, column, len(width)
}

// Session is one engine session.
type Session struct {
	ID              uint64     `json:"id"`
	User            string     `json:"user"`
	Database        string     `json:"database"`
	ApplicationName string     `json:"application_name"`
	ClientAddr      string     `json:"client_addr"`
	State           string     `json:"state"`
	Query           string     `json:"query"`
	QueryStart      *time.Time `json:"query_start"`
	BackendStart    *time.Time `json:"backend_start"`
}

func apiSessions(eng *runtime.Engine, r *http.Request) (any, error) {
	return sessionsOf(eng), nil
}

func sessionsOf(eng *runtime.Engine) []Session {
	out := []Session{}
	for _, si := range eng.Sessions() {
		s := Session{ID: si.ID, User: si.Client.User, Database: si.Client.Database,
			ApplicationName: si.Client.ApplicationName, State: string(si.State), Query: si.Query}
		if si.Client.Addr != nil {
			s.ClientAddr = si.Client.Addr.String()
			if host, _, err := net.SplitHostPort(s.ClientAddr); err == nil {
				s.ClientAddr = host
			}
		}
		if !si.QueryStart.IsZero() {
			t := si.QueryStart.UTC()
			s.QueryStart = &t
		}
		if !si.BackendStart.IsZero() {
			t := si.BackendStart.UTC()
			s.BackendStart = &t
		}
		out = append(out, s)
	}
	return out
}

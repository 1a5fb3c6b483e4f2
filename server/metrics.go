package server

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/papergraph/papergraph/db"
)

// Operation label values that are not operation names.
const (
	opAnonymous = "anonymous" // no name given
	opOther     = "other"     // not a GraphQL name, or past maxOperationNames
)

// maxOperationNames bounds the operation label's cardinality: names first
// seen after this many distinct ones are counted as "other".
const maxOperationNames = 100

// metrics holds the server's Prometheus collectors in a registry of its
// own, so that several servers in one process (as in tests) do not clash.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	names    operationNames
}

// newMetrics registers the server's collectors, statements and the
// statements waiting for one of sched's slots among them.
func newMetrics(statements *db.StatementCounter, sched *db.Scheduler, replicas *db.Replicas) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "papergraph_graphql_requests_total",
			Help: "GraphQL requests by operation name, HTTP status code and whether the response carried errors.",
		}, []string{"operation", "code", "has_errors"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "papergraph_graphql_request_duration_seconds",
			Help:    "Time to answer a GraphQL request, by operation name.",
			Buckets: prometheus.DefBuckets,
		}, []string{"operation"}),
		names: operationNames{seen: map[string]bool{}},
	}
	m.registry.MustRegister(
		m.requests,
		m.duration,
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "papergraph_sql_statements_total",
			Help: "SQL statements sent to the database.",
		}, func() float64 { return float64(statements.Count()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "papergraph_sql_statements_waiting",
			Help: "SQL statements waiting for a slot of the serving pool, all clients together.",
		}, func() float64 { return float64(sched.Waiting()) }),
		replicaCollector{replicas},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// countStatements returns bdb with a query hook that counts every
// statement sent through it. bdb itself is left as it is, so that each
// server counts its own statements, once, however many are built on one
// database.
func countStatements(bdb *bun.DB) (*bun.DB, *db.StatementCounter) {
	statements := &db.StatementCounter{}
	return db.WithQueryHook(bdb, statements), statements
}

// handler serves the registry in the Prometheus exposition format.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// instrument records every request next answers, using what the
// exchangeRecorder extension learnt about it.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		ex := exchangeFrom(r.Context())
		op := m.names.label(ex.operation)
		m.requests.WithLabelValues(op, strconv.Itoa(ex.status), strconv.FormatBool(ex.errors)).Inc()
		m.duration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	})
}

// operationNames turns client-chosen operation names into label values,
// admitting at most maxOperationNames distinct ones, or, when known is set
// (the names the trusted documents define), only those.
type operationNames struct {
	mu    sync.Mutex
	seen  map[string]bool
	known map[string]bool
}

func (n *operationNames) label(name string) string {
	if name == "" {
		return opAnonymous
	}
	if !isGraphQLName(name) || len(name) > 64 {
		return opOther
	}
	if n.known != nil {
		if n.known[name] {
			return name
		}
		return opOther
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.seen[name] {
		if len(n.seen) >= maxOperationNames {
			return opOther
		}
		n.seen[name] = true
	}
	return name
}

// isGraphQLName reports whether s matches /[_A-Za-z][_0-9A-Za-z]*/.
func isGraphQLName(s string) bool {
	for i, c := range s {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || '9' < c) {
			return false
		}
	}
	return s != ""
}

// exchangeRecorder is a gqlgen extension that notes, on the request's
// exchange, the operation's name and whether its response carried errors.
// It sees requests gqlgen rejects as well as those it executes, because
// gqlgen passes error responses through the response interceptors too.
type exchangeRecorder struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.ResponseInterceptor
} = exchangeRecorder{}

func (exchangeRecorder) ExtensionName() string                   { return "ExchangeRecorder" }
func (exchangeRecorder) Validate(graphql.ExecutableSchema) error { return nil }

func (exchangeRecorder) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	exchangeFrom(ctx).operation = params.OperationName
	return nil
}

func (exchangeRecorder) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	ex := exchangeFrom(ctx)
	// A document with one operation may omit operationName; once parsed,
	// the operation has its real name.
	if graphql.HasOperationContext(ctx) {
		if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Name != "" {
			ex.operation = op.Name
		}
	}
	if resp != nil && len(resp.Errors) > 0 {
		ex.errors = true
	}
	nameOperation(ctx, ex.operation)
	return resp
}

// replicaCollector exports the state of the read replicas, by their
// position in --db-replica (their DSNs may hold passwords).
type replicaCollector struct{ replicas *db.Replicas }

var (
	replicaUp = prometheus.NewDesc("papergraph_replica_up",
		"1 while reads go to the read replica, 0 while it is skipped (down or lagging).", []string{"replica"}, nil)
	replicaLag = prometheus.NewDesc("papergraph_replica_lag_seconds",
		"How far the read replica's replay is behind the primary, as of its last check.", []string{"replica"}, nil)
	replicaFailovers = prometheus.NewDesc("papergraph_replica_failovers_total",
		"Statements the read replica failed that ran again on the primary.", []string{"replica"}, nil)
)

func (c replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- replicaUp
	ch <- replicaLag
	ch <- replicaFailovers
}

func (c replicaCollector) Collect(ch chan<- prometheus.Metric) {
	if c.replicas == nil {
		return
	}
	for i, st := range c.replicas.Status() {
		name := strconv.Itoa(i)
		up := 0.0
		if st.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(replicaUp, prometheus.GaugeValue, up, name)
		if st.Lag >= 0 {
			ch <- prometheus.MustNewConstMetric(replicaLag, prometheus.GaugeValue, st.Lag.Seconds(), name)
		}
		ch <- prometheus.MustNewConstMetric(replicaFailovers, prometheus.CounterValue, float64(st.Failovers), name)
	}
}

package zkwire

import (
	"net"
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// TestServer is a wire server on loopback for a test, with its control
// endpoint, shaped like httptest.Server.
type TestServer struct {
	*Server
	addr    string
	control string
	own     bool // the zkmem server is ours to close
}

// TestOption configures NewTestServer.
type TestOption func(*testConfig)

type testConfig struct {
	zk     *zkmem.Server
	zkOpts zkmem.Options
	opts   Options
}

// WithZK serves an existing zkmem server (which the caller closes) instead
// of a fresh one.
func WithZK(zk *zkmem.Server) TestOption { return func(c *testConfig) { c.zk = zk } }

// WithZKOptions sets the options of the fresh zkmem server.
func WithZKOptions(o zkmem.Options) TestOption { return func(c *testConfig) { c.zkOpts = o } }

// WithOptions sets the wire server's options.
func WithOptions(o Options) TestOption { return func(c *testConfig) { c.opts = o } }

// NewTestServer starts a wire server on 127.0.0.1:0 over a fresh zkmem
// server, and its control endpoint on another 127.0.0.1:0 port. t.Cleanup
// closes both.
func NewTestServer(t testing.TB, opts ...TestOption) *TestServer {
	t.Helper()
	ts, err := Start(opts...)
	if err != nil {
		t.Fatalf("zkwire: %v", err)
	}
	t.Cleanup(ts.Close)
	return ts
}

// Start is NewTestServer without a testing.TB: the caller closes the
// server with Close.
func Start(opts ...TestOption) (*TestServer, error) {
	var cfg testConfig
	for _, o := range opts {
		o(&cfg)
	}
	ts := &TestServer{}
	if cfg.zk == nil {
		cfg.zk = zkmem.NewServer(cfg.zkOpts)
		ts.own = true
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ln.Close()
		return nil, err
	}
	if cfg.opts.ClientPort == 0 {
		cfg.opts.ClientPort = ln.Addr().(*net.TCPAddr).Port
	}
	ts.Server = New(cfg.zk, cfg.opts)
	ts.addr = ln.Addr().String()
	ts.control = "http://" + cln.Addr().String()
	ts.wg.Add(2)
	go func() {
		defer ts.wg.Done()
		ts.Serve(ln)
	}()
	go func() {
		defer ts.wg.Done()
		ts.ServeControl(cln)
	}()
	return ts, nil
}

// Addr returns the address clients connect to, "127.0.0.1:port".
func (ts *TestServer) Addr() string { return ts.addr }

// ControlURL returns the control endpoint's base URL,
// "http://127.0.0.1:port".
func (ts *TestServer) ControlURL() string { return ts.control }

// Close closes the control endpoint, the wire server and, unless it was
// given with WithZK, the zkmem server.
func (ts *TestServer) Close() {
	ts.Server.Close()
	if ts.own {
		ts.zk.Close()
	}
}

package zkwire

import (
	"errors"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// Options configure a Server. The zero value is a real server's defaults;
// a zero or negative MaxBuffer or SessionlessTimeout takes its default
// (zksim serve refuses a -jute.maxbuffer that is not positive).
type Options struct {
	// MaxBuffer is jute.maxbuffer: a frame longer than this (or with a
	// negative length) closes the connection. Default 1,048,575 bytes.
	MaxBuffer int
	// SessionlessTimeout is how long a connection may stay without
	// completing the handshake before the server closes it
	// (zookeeper.nio.sessionlessCnxnTimeout, default 10s).
	SessionlessTimeout time.Duration
	// FourLetterWords lists the four-letter words answered; every other
	// known word gets "<cmd> is not executed because it is not in the
	// whitelist." Default: ruok, srvr, stat, mntr, cons, dump, envi, conf,
	// isro. "*" answers all of those.
	FourLetterWords []string
	// ClientPort is reported by conf; 0 reports the listener's port.
	ClientPort int
	// Logf, if set, is told of connections opened and closed, sessions
	// opened, resumed, closed and expired, faults, resets and restarts,
	// one line each ("zksim serve -v" logs them to stderr). It may be
	// called with the server's locks held, from any goroutine: it must not
	// call the server.
	Logf func(format string, args ...any)
}

var defaultWords = []string{"ruok", "srvr", "stat", "mntr", "cons", "dump", "envi", "conf", "isro"}

func (o Options) withDefaults() Options {
	if o.MaxBuffer <= 0 {
		o.MaxBuffer = jute.DefaultMaxBuffer
	}
	if o.SessionlessTimeout <= 0 {
		o.SessionlessTimeout = 10 * time.Second
	}
	if o.FourLetterWords == nil {
		o.FourLetterWords = defaultWords
	}
	return o
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("zkwire: server closed")

// Server serves a zkmem.Server over ZooKeeper's client protocol.
type Server struct {
	zk    *zkmem.Server
	ens   *zkmem.Ensemble // the ensemble zk is the server of, for NewEnsemble; else nil
	opts  Options
	start time.Time
	words map[string]bool

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	controls  map[*http.Server]struct{} // control endpoints of ServeControl
	conns     map[*conn]struct{}
	sessions  map[int64]*session
	downUntil time.Time // Restart: connections are refused until then
	wg        sync.WaitGroup

	// leaderSince is when the ensemble's leader began to lead (mntr's
	// zk_leader_uptime); guarded by mu.
	leaderSince time.Time

	ledger ledger   // what GET /sessions reports
	events eventLog // what GET /events reports

	received atomic.Int64
	sent     atomic.Int64
	lat      latency
}

// New returns a server fronting zk. It serves nothing until Serve.
func New(zk *zkmem.Server, opts Options) *Server {
	s := &Server{
		zk:        zk,
		opts:      opts.withDefaults(),
		start:     time.Now(),
		listeners: make(map[net.Listener]struct{}),
		controls:  make(map[*http.Server]struct{}),
		conns:     make(map[*conn]struct{}),
		sessions:  make(map[int64]*session),
		words:     make(map[string]bool),
	}
	for _, w := range s.opts.FourLetterWords {
		if w == "*" {
			for _, d := range defaultWords {
				s.words[d] = true
			}
			continue
		}
		s.words[w] = true
	}
	return s
}

// ZK returns the zkmem server behind s.
func (s *Server) ZK() *zkmem.Server { return s.zk }

// Serve accepts connections on ln until Close, serving each on its own
// goroutines. It closes ln when it returns, and returns ErrServerClosed
// after Close.
func (s *Server) Serve(ln net.Listener) error { return s.serve(ln, -1) }

// serve is Serve, for the port of ensemble member i (-1: the server's).
func (s *Server) serve(ln net.Listener, member int) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()
	for {
		nc, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		s.serveConn(nc, member)
	}
}

// ServeConn serves one connection already accepted, such as one end of a
// net.Pipe. It returns at once; the connection is served on its own
// goroutines until it closes or the server does.
func (s *Server) ServeConn(nc net.Conn) { s.serveConn(nc, -1) }

func (s *Server) serveConn(nc net.Conn, member int) {
	c := newConn(s, nc)
	c.member = member
	down := member >= 0 && s.ens.Role(member) == zkmem.RoleDown
	s.mu.Lock()
	if s.closed || time.Now().Before(s.downUntil) || down {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.conns[c] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	s.logf("connection from %s", c.remote)
	go c.readLoop()
	go c.writeLoop()
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Close stops the listeners and the control endpoints of ServeControl,
// closes every connection and waits for their
// goroutines. It returns promptly whatever faults are armed: replies a
// Delay holds are dropped (the calls waiting on them fail with
// zksim.ErrConnectionLoss) and a paused session's reader stops. Sessions
// stay in the zkmem server (whose Close is the caller's), detached: they
// expire after their timeout unless a client resumes them elsewhere. Close
// is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	for ln := range s.listeners {
		ln.Close()
	}
	for hs := range s.controls {
		hs.Close()
	}
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	sessions := s.sessions
	s.sessions = make(map[int64]*session)
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
		// Detach the session now, not when the reader returns: a reader
		// waiting inside zkmem for a reply a Delay holds returns only once
		// zkmem drops what it held, which detaching does.
		if ws := c.sess.Load(); ws != nil {
			ws.detach(c)
		}
	}
	for _, ws := range sessions {
		ws.stopTimers()
	}
	s.wg.Wait()
	return nil
}

// SessionIDs returns the ids of the zkmem server's live sessions, in
// order.
func (s *Server) SessionIDs() []int64 { return s.zk.SessionIDs() }

func (s *Server) connList() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

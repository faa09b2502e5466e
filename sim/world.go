package sim

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
)

// Config describes a World.
type Config struct {
	// Seed seeds the scheduler's and the fault policy's generators, and
	// each client's random stream (Conn.RandReader, from which recipes draw
	// their GUIDs); through Test, crypto/rand too. The same seed replays
	// the same run.
	Seed uint64
	// Clients is the number of sessions opened by New: clients c0 to
	// c(Clients-1). World.Connect opens more later.
	Clients int
	// Server configures the zkmem server (every member's, for an
	// ensemble).
	Server zkmem.Options
	// Members, if 2 or more, makes the server a zkmem ensemble of that
	// many members (3 or 5 for ZooKeeper's usual sizes); 0 or 1 is a
	// standalone server. Each client connects through its own order of
	// the members, drawn from the seed (a shuffled connect string); a
	// lagging member applying its next commit is an event of the
	// scheduler; the ensemble faults are on Faults (Lag, CatchUp, Crash,
	// Restart, Isolate, Heal, FailLeader). go-zookeeper clients
	// (ConnectZK) get every member's address, in their drawn order.
	Members int
	// SessionTimeout is the session timeout every client asks for (default
	// 10s; the server clamps it).
	SessionTimeout time.Duration
	// ReconnectDelay is how long a client whose connection a fault broke (a
	// lost reply, a dropped request, an expiry) stays disconnected before
	// it reconnects to its session. Default 0: as soon as the scheduler
	// delivers the reconnection.
	ReconnectDelay time.Duration
	// Cost is the server's cost model; the zero value serves instantly.
	Cost CostModel
	// Policy injects faults; nil injects none.
	Policy Policy
	// Choose, if set, picks the event a step takes among the enabled
	// ones, given in the canonical order (apply the head request of a
	// session, by session; then deliver the head of a session's FIFO, by
	// session; on an ensemble, then a lagging member applying its next
	// commit, by member, and, when only those are enabled, last, letting
	// time pass with the members behind): it returns an index into
	// events, or a negative number to leave the choice to the seeded
	// generator. A property-based test hands the choice to its own
	// generator this way, so that it can shrink the schedule; picking by
	// the Choice rather than by its position keeps a pick when the
	// shrink drops an unrelated event. It is called on the World's
	// goroutine; events is the World's, valid during the call.
	Choose func(events []Choice) int
	// NearWrap starts the sequence numbers of every node the server
	// creates (but containers) within 16 of the int32 wrap, at an offset
	// drawn from the seed and the node's path: a directory's sequential
	// children cross from 2147483647 to -2147483648 within its first 16
	// creates, so code that orders them by number is tested across the wrap
	// (see zkmem.Server.SetSequenceStart, which it calls).
	NearWrap bool
	// PCT, if its Depth is set, makes the choices left to the seed follow
	// PCT priorities (see PCT) instead of uniform draws: rare
	// interleavings, one client far ahead of another, become likely.
	PCT PCT
	// OnApply, if set, is told of every request the server takes, as it
	// takes it: client i's request r, applied (whatever its result, which
	// the caller may never hear: a LoseReply fault applies it and breaks
	// the connection). A request dropped before the server saw it, or sent
	// on a broken connection, is not told. It is called on the World's goroutine, with the server's lock
	// not held; it must not call the World, nor keep r (part of the
	// client's request record, which serves its next call). A machine attributes what
	// changed in the tree to the client that changed it this way (a queue
	// item's remove, say).
	OnApply func(client int, r *zkmem.Request)
	// MaxSteps bounds Run and RunFor (default 10,000,000).
	MaxSteps int
	// IdleTimeout is how much virtual time Run lets pass with nothing
	// happening before it gives up with ErrIdle (default 1h).
	IdleTimeout time.Duration
	// NoTrace keeps no trace (for benchmarks): Trace returns nothing.
	NoTrace bool
	// Logf, if set, receives every trace line as it is recorded.
	Logf func(format string, args ...any)
}

func (c Config) withDefaults() Config {
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 10 * time.Second
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = 10_000_000
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = time.Hour
	}
	return c
}

// Errors returned by Step, Run and RunFor.
var (
	// ErrIdle: nothing was enabled and nothing happened for
	// Config.IdleTimeout of virtual time (every client is blocked for good,
	// or finished).
	ErrIdle = errors.New("sim: idle: nothing can happen")
	// ErrMaxSteps: Config.MaxSteps steps were taken.
	ErrMaxSteps = errors.New("sim: step limit reached")
	// ErrClosed: the World was closed.
	ErrClosed = errors.New("sim: world closed")
)

// farFuture is the reconnect delay given to zkmem, so that zkmem never
// reconnects by itself: the scheduler decides when a client reconnects.
const farFuture = 100 * 365 * 24 * time.Hour

// World is a set of simulated clients over one zkmem server, driven by a
// deterministic scheduler. Create it with New inside a testing/synctest
// bubble (or use Test). Only the goroutine that created it may call its
// methods, except where a method says otherwise; client code uses the
// Conns from any goroutine.
type World struct {
	cfg    Config
	srv    *zkmem.Server
	start  time.Time
	now    time.Duration // virtual time at the last look
	rng    *rand.Rand    // the scheduler's choices
	frng   *rand.Rand    // the fault policy's draws
	src    *rand.PCG     // rng's source (Reseed)
	fsrc   *rand.PCG     // frng's source (Reseed)
	policy Policy
	step   int

	ctx    context.Context // given to World.Go goroutines; cancelled by Close
	cancel context.CancelFunc
	done   chan struct{} // closed by Close

	// mu guards what client goroutines and server callbacks touch: the
	// inboxes, the FIFOs, and the lists below.
	mu      sync.Mutex
	closed  bool
	arrived []*session // sessions with requests in their inbox
	dirty   []*session // sessions whose FIFO got an item
	wake    chan struct{}

	// spare holds the emptied lists of the last collect, reused by the
	// next (owned by the World's goroutine: not guarded by mu).
	spare struct {
		arrived, dirty []*session
		inboxes        [][]*request
	}

	sessions  []*session
	choiceBuf []Choice   // the events Config.Choose is offered (choice.go)
	applyOK   enabledSet // sessions whose head request can be applied now
	deliver   enabledSet // sessions whose FIFO head can be delivered now
	timeline  timeline
	busy      int // requests in service

	slowExtra time.Duration // added to every request's service time
	slowGen   int

	trace  tracer
	timer  *time.Timer
	faults Faults
	wsrv   *zkwire.Server // serves the go-zookeeper clients, made by the first
	pct    pct
	cover  Coverage  // nil with NoTrace
	ens    *ensState // the ensemble, nil for a standalone server (ensemble.go)
}

// New creates a World as described by cfg, with cfg.Clients connected
// clients. It must be called inside a testing/synctest bubble: the World
// relies on virtual time and on synctest.Wait.
func New(cfg Config) (*World, error) {
	cfg = cfg.withDefaults()
	w := &World{
		cfg:    cfg,
		start:  time.Now(),
		src:    rand.NewPCG(cfg.Seed, schedStream),
		fsrc:   rand.NewPCG(cfg.Seed, faultStream),
		policy: cfg.Policy,
		done:   make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	w.rng, w.frng = rand.New(w.src), rand.New(w.fsrc)
	w.faults.w = w
	w.srv, w.ens = newServer(cfg)
	// Session passwords from the seed, not from crypto/rand: a replay is
	// the same run, byte for byte.
	var secret [8]byte
	binary.LittleEndian.PutUint64(secret[:], cfg.Seed)
	w.srv.SetSessionSecret(append([]byte("zksim/sim session secret "), secret[:]...))
	if cfg.NearWrap {
		seed := cfg.Seed
		w.srv.SetSequenceStart(func(path string) int32 {
			h := fnv.New64a()
			_ = binary.Write(h, binary.LittleEndian, seed)
			h.Write([]byte(path))
			return math.MaxInt32 - int32(h.Sum64()%16)
		})
	}
	if !cfg.NoTrace {
		w.cover = Coverage{}
	}
	w.pct.init(cfg.PCT, cfg.Seed)
	if w.pct.on {
		w.applyOK.byPrio = &prioHeap{sessions: &w.sessions}
		w.deliver.byPrio = &prioHeap{sessions: &w.sessions}
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.trace.init(!cfg.NoTrace, cfg.Logf)
	if w.policy != nil {
		StartPolicy(w.policy, w)
		w.notef("policy %v", w.policy)
	}
	for range cfg.Clients {
		if _, err := w.Connect(); err != nil {
			w.Close()
			return nil, err
		}
	}
	return w, nil
}

// Connect opens a new session and returns its client, named after its
// index ("c5" for the sixth). Call it from the World's goroutine.
func (w *World) Connect() (*Conn, error) {
	if w.isClosed() {
		return nil, ErrClosed
	}
	s := newSession(w, len(w.sessions))
	s.name = fmt.Sprintf("c%d", s.idx)
	s.rand.init(w.cfg.Seed, s.idx)
	s.prio = w.pct.priority()
	lag := w.lagSnapshot()
	zc, err := w.srv.Connect(append([]zkmem.ConnOption{
		zkmem.WithSessionTimeout(w.cfg.SessionTimeout),
		zkmem.WithReconnectDelay(farFuture),
		zkmem.WithEventTransport(s.hold),
	}, w.memberOpts(s.idx)...)...)
	if err != nil {
		return nil, err
	}
	s.zc = zc
	s.ctl = w.srv.Control(zc.SessionID())
	s.ctl.SetFaultHook(s.decide)
	s.conn = &Conn{s: s, state: zksim.StateConnected}
	w.sessions = append(w.sessions, s)
	w.applyOK.grow(len(w.sessions))
	w.deliver.grow(len(w.sessions))
	w.notef("%s connect session %#x timeout %v", s.name, zc.SessionID(), zc.SessionTimeout())
	w.afterSessionOpened(s, lag)
	return s.conn, nil
}

// Conn returns client i (nil for a go-zookeeper client: see ZK).
func (w *World) Conn(i int) *Conn { return w.sessions[i].conn }

// Conns returns every client, by index (nil for go-zookeeper clients).
func (w *World) Conns() []*Conn {
	out := make([]*Conn, len(w.sessions))
	for i, s := range w.sessions {
		out[i] = s.conn
	}
	return out
}

// NumClients returns the number of clients.
func (w *World) NumClients() int { return len(w.sessions) }

// Live reports whether client i's session is still open as far as the
// server knows (not expired, not closed).
//
// A native client (Conn) is one session: once it expired or closed, Live
// stays false, and a process that goes on makes a new client (Connect), the
// next index. A go-zookeeper client (ConnectZK) is one *zk.Conn over any
// number of sessions: go-zookeeper opens a new session by itself after its
// old one expired, under the same index. For it Live is false from the step
// at which the server expired its session (or it closed) until the step at
// which the server granted it a new one, and true again after that; compare
// zk.Conn.SessionID with Server().SessionIDs() to ask about one session.
func (w *World) Live(i int) bool { return !w.sessions[i].gone }

// Paused reports whether client i is paused.
func (w *World) Paused(i int) bool { return w.sessions[i].paused }

// Server returns the zkmem server, for checks that bypass the scheduler
// (say, reading the tree at the end of a run). Calls on it are not
// scheduled and not traced.
func (w *World) Server() *zkmem.Server { return w.srv }

// SessionTimeout returns the session timeout of the World's clients:
// Config.SessionTimeout as the server negotiates it (clamped to the
// server's bounds). Fault policies size pauses and disconnections by it.
func (w *World) SessionTimeout() time.Duration {
	o := w.srv.Options()
	return min(max(w.cfg.SessionTimeout, o.MinSessionTimeout), o.MaxSessionTimeout)
}

// Seed returns the seed the World was created with.
func (w *World) Seed() uint64 { return w.cfg.Seed }

// Now returns the virtual time since the World was created.
func (w *World) Now() time.Duration { return time.Since(w.start) }

// Steps returns the number of steps taken so far.
func (w *World) Steps() int { return w.step }

// Rand returns the fault generator, for faults that draw (which client, how
// long). Use it only from the World's goroutine (in Inject, Step, Request).
func (w *World) Rand() *rand.Rand { return w.frng }

// The streams of a World's seed: the scheduler's choices and the fault
// policy's draws.
const (
	schedStream = 0x5ced_51a7
	faultStream = 0xfa17_5eed
)

// Reseed restarts the scheduler's choices and the fault policy's draws
// (Rand) from seed, as New does from Config.Seed. What else the seed
// decided stays: the session secret, the sequence start, PCT's change
// points and priorities, and each client's own stream.
//
// A harness that reseeds at the start of each of its actions, from a
// draw of that action, gives every action randomness of its own: when a
// shrinker drops an earlier action, what a later one draws does not
// shift. Use it only from the World's goroutine, between steps.
func (w *World) Reseed(seed uint64) {
	w.src.Seed(seed, schedStream)
	w.fsrc.Seed(seed, faultStream)
}

// Context returns a context that is cancelled when the World is closed.
func (w *World) Context() context.Context { return w.ctx }

// Go runs f in a new goroutine with the World's context, and waits until
// it blocks (on a request, say) before returning, so goroutines started one
// after another make their first moves in that order. Call it from the
// World's goroutine.
func (w *World) Go(f func(ctx context.Context)) {
	go f(w.ctx)
	w.settle()
}

// Close shuts the World down: the server is closed, pending and future
// calls fail with zksim.ErrClosing, session-event channels are closed, and
// the World's context is cancelled. Then virtual time runs for
// Config.IdleTimeout, so that client goroutines asleep on a timer wake, see
// the context done and return: the bubble cannot end while one is left
// blocked, and once its main goroutine has returned time stands still.
// Call it from the World's goroutine.
func (w *World) Close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.done)
	w.endRequests()
	w.cancel()
	if w.timer != nil {
		w.timer.Stop()
	}
	w.closeWire()
	w.endParked()
	w.srv.Close()
	for _, s := range w.sessions {
		if s.conn != nil {
			s.conn.finish()
		}
		if s.renew != nil {
			s.renew.finish()
		}
	}
	w.closeWireServer()
	time.Sleep(w.cfg.IdleTimeout)
}

func (w *World) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// Wake makes the scheduler look again if it is letting virtual time pass.
// Run checks its until function only between steps, and a client that only
// changes its own state (a timer fired, a context ended) makes no step; a
// client that wants Run to notice can call Wake, from any goroutine.
func (w *World) Wake() { w.signal() }

// signal wakes the scheduler if it is waiting for time to pass.
func (w *World) signal() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

package gozk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/internal/pump"
)

// Conn is a zksim.Conn over a go-zookeeper connection. It owns one session
// for its whole life: when the session expires the Conn is finished (see
// the package doc). Its methods are safe for concurrent use.
type Conn struct {
	zk *zk.Conn

	sessionID atomic.Int64  // the session, set once when first granted
	grantedID atomic.Int64  // the id in the latest connect response
	timeoutMs atomic.Int32  // negotiated session timeout
	finished  atomic.Bool   // expired or closed: the dialer refuses to reconnect
	loopDone  chan struct{} // closed when go-zookeeper's connection loop has ended
	connected chan struct{} // closed at the first StateConnected (or StateConnectedReadOnly)
	expiredCh chan struct{} // closed when the session is seen to expire
	closedCh  chan struct{} // closed by Close, before it waits for anything

	local netip.Addr // WithLocalAddr; the zero Addr lets the system pick

	netMu   sync.Mutex
	netConn net.Conn // the latest socket go-zookeeper dialled
	tried   []string // the addresses dialled, in the order first tried
	dialErr error    // the latest failed dial, for Connect's error

	wmu     sync.Mutex                // guards watches; taken before mu, never after
	watches map[watchKey][]*forwarder // pending watch channels

	mu      sync.Mutex
	state   zksim.State
	expired bool
	closed  bool
	subs    []*pump.Pump // SessionEvents subscribers
	// calls counts the calls in progress and the goroutines gozk started;
	// Close waits for it. Add happens under mu while !closed (enter), or
	// while a registered call or goroutine holds a count.
	calls sync.WaitGroup

	// The calls abandoned while their go-zookeeper call was still running
	// (see call). nAbandoned is len(abandoned), read without omu so that a
	// call pays one atomic load when there are none.
	nAbandoned atomic.Int32
	omu        sync.Mutex            // guards abandoned and pending.done; never held with another lock
	abandoned  map[*pending]struct{} // guarded by omu

	closeOnce sync.Once
}

// pending is one call whose go-zookeeper call runs in a goroutine because
// its ctx can end first.
type pending struct {
	state  atomic.Uint32 // pendingRunning, then pendingAnswered or pendingAbandoned
	result chan error    // capacity 1: f's mapped error
	done   chan struct{} // set under omu when abandoned; closed when f has returned
}

const (
	pendingRunning uint32 = iota
	pendingAnswered
	pendingAbandoned
)

var _ zksim.Conn = (*Conn)(nil)

// Option configures Connect.
type Option func(*options)

type options struct {
	sessionTimeout time.Duration
	connectTimeout time.Duration
	logger         zk.Logger
	localAddr      netip.Addr
}

// DefaultConnectTimeout bounds Connect when neither its ctx has a deadline
// nor WithConnectTimeout sets another bound.
const DefaultConnectTimeout = 30 * time.Second

// defaultConnectTimeout is DefaultConnectTimeout; tests shorten it.
var defaultConnectTimeout = DefaultConnectTimeout

// WithConnectTimeout bounds how long Connect waits for a session when its
// ctx has no earlier deadline (default DefaultConnectTimeout). A d of 0 or
// less means no bound: Connect then waits as long as ctx allows.
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) { o.connectTimeout = d }
}

// WithSessionTimeout sets the session timeout requested from the server
// (default 10s). The server clamps it to [2, 20] times its tick time;
// SessionTimeout reports the result.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) { o.sessionTimeout = d }
}

// WithLocalAddr makes every connection to a server leave from addr, a
// local address (say, 127.0.0.2 or ::1 on loopback), as the server's "ip"
// identity of the session. By default the system picks it.
func WithLocalAddr(addr netip.Addr) Option {
	return func(o *options) { o.localAddr = addr }
}

// Logger receives go-zookeeper's log lines. *log.Logger is one.
type Logger interface {
	Printf(format string, args ...any)
}

// WithLogger sends go-zookeeper's error log lines (failed connection
// attempts, for instance) to l. By default they are discarded.
func WithLogger(l Logger) Option {
	return func(o *options) { o.logger = l }
}

type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}

// Connect connects to one of servers ("host:port") and blocks until the
// server has granted a session, ctx is done, or the connect timeout has
// passed (DefaultConnectTimeout, 30s, unless WithConnectTimeout sets
// another). go-zookeeper tries the servers in turn, about once a second;
// when no server grants a session in time the attempt is abandoned and the
// error, which matches ctx's error (context.DeadlineExceeded when the
// bound ran out), names the servers tried and the last failure.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Conn, error) {
	o := options{sessionTimeout: 10 * time.Second, connectTimeout: defaultConnectTimeout, logger: discardLogger{}}
	for _, opt := range opts {
		opt(&o)
	}
	parent := ctx
	if o.connectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.connectTimeout)
		defer cancel()
	}
	c := &Conn{
		loopDone:  make(chan struct{}),
		connected: make(chan struct{}),
		expiredCh: make(chan struct{}),
		closedCh:  make(chan struct{}),
		state:     zksim.StateConnecting,
		watches:   make(map[watchKey][]*forwarder),
		local:     o.localAddr,
	}
	zc, zkEvents, err := zk.Connect(servers, o.sessionTimeout,
		zk.WithEventCallback(c.onEvent),
		zk.WithDialer(c.dial),
		zk.WithLogger(o.logger),
		zk.WithLogInfo(false),
	)
	if err != nil {
		return nil, fmt.Errorf("gozk: connect: %w", err)
	}
	c.zk = zc
	// Session events arrive through the callback; the channel is drained
	// only to learn when go-zookeeper's loop has ended (it closes it then).
	go func() {
		for range zkEvents {
		}
		close(c.loopDone)
	}()
	c.calls.Add(1)
	go c.closeOnExpiry()

	select {
	case <-c.connected:
		return c, nil
	case <-ctx.Done():
		c.Close()
		why := ctx.Err()
		if parent.Err() == nil {
			why = fmt.Errorf("no session within the connect timeout (%v): %w", o.connectTimeout, why)
		}
		return nil, c.connectError(servers, why)
	}
}

// connectError is Connect's error when no session was granted in time:
// why, with the servers tried and the last failure.
func (c *Conn) connectError(servers []string, why error) error {
	c.netMu.Lock()
	tried, last := c.tried, c.dialErr
	c.netMu.Unlock()
	what := "no server granted a session"
	if len(tried) == 0 {
		tried, what = servers, "no server dialled yet"
	}
	if last != nil {
		what = "last failure: " + last.Error()
	}
	return fmt.Errorf("gozk: connect to %s: %w; %s", strings.Join(tried, ", "), why, what)
}

// closeOnExpiry closes the go-zookeeper connection once the session has
// expired, so that it does not reconnect with a new session.
func (c *Conn) closeOnExpiry() {
	defer c.calls.Done()
	select {
	case <-c.expiredCh:
		c.stopZK()
	case <-c.loopDone:
	}
}

// SessionID returns the id of the Conn's session. It stays the same after
// the session expired.
func (c *Conn) SessionID() int64 { return c.sessionID.Load() }

// SessionTimeout returns the session timeout the server negotiated.
func (c *Conn) SessionTimeout() time.Duration {
	return time.Duration(c.timeoutMs.Load()) * time.Millisecond
}

// State returns the current session state.
func (c *Conn) State() zksim.State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Close closes the session (its ephemeral nodes are deleted) and the
// connection. Pending watches receive EventNotWatching with
// zksim.ErrClosing, SessionEvents channels are closed, State reports
// StateClosed, and later calls return zksim.ErrClosing. Close blocks until
// go-zookeeper has stopped and every call in progress has returned: at most
// about a second when the server cannot be reached. It is idempotent and
// always returns nil.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.finished.Store(true)
		c.state = zksim.StateClosed
		close(c.closedCh) // subscribers stop
		subs := c.subs
		c.subs = nil
		c.mu.Unlock()

		c.stopZK()
		<-c.loopDone   // every go-zookeeper watch has been told
		c.calls.Wait() // and forwarded; every call has returned
		last := zksim.Event{Type: zksim.EventSession, State: zksim.StateClosed}
		for _, p := range subs {
			p.CloseWith(&last)
		}
	})
	return nil
}

// enter registers a call with c.calls, or returns the error a call on a
// finished Conn gets.
func (c *Conn) enter() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.finishedErrLocked(); err != nil {
		return err
	}
	c.calls.Add(1)
	return nil
}

func (c *Conn) finishedErrLocked() error {
	switch {
	case c.closed:
		return zksim.ErrClosing
	case c.expired:
		return zksim.ErrSessionExpired
	}
	return nil
}

// call runs f, a blocking go-zookeeper call, and maps its error. f's own
// errors are never context errors.
//
// A call whose ctx ends returns ctx.Err() at once (or f's answer, if f has
// returned by then) and leaves f running in the background: its request
// may still be applied by the server, and the caller must not read what f
// writes. Calls made after it on the same Conn are sent only after it has
// been answered, so ZooKeeper's order of a session holds: a cleanup made
// after an abandoned create finds the node if the create was applied at
// all. Precisely: a call that starts after an earlier call was abandoned
// (its ctx ended while its f was still running) does not run its f until
// every such f has returned. The wait ends early, without sending anything,
// when the new call's own ctx ends (ctx.Err()) or the Conn is finished
// (zksim.ErrClosing or zksim.ErrSessionExpired). It is bounded in any case:
// go-zookeeper fails an outstanding request when its connection breaks, and
// breaks the connection when the server stops answering. A call that starts
// while no abandoned f is running pays one atomic load for this.
func (c *Conn) call(ctx context.Context, f func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := c.enter(); err != nil {
		return err
	}
	if c.nAbandoned.Load() != 0 {
		if err := c.waitAbandoned(ctx); err != nil {
			c.calls.Done()
			return err
		}
	}
	if ctx.Done() == nil {
		defer c.calls.Done()
		return c.mapErr(f())
	}
	p := &pending{result: make(chan error, 1)}
	go func() {
		defer c.calls.Done()
		err := c.mapErr(f())
		if !p.state.CompareAndSwap(pendingRunning, pendingAnswered) {
			c.release(p)
		}
		p.result <- err
	}()
	select {
	case err := <-p.result:
		return err
	case <-ctx.Done():
		if !c.abandon(p) {
			// f returned first: its answer is the call's.
			return <-p.result
		}
		return ctx.Err()
	}
}

// abandon marks p abandoned, unless its f has already returned (then it
// reports false). Later calls wait for it in waitAbandoned.
func (c *Conn) abandon(p *pending) bool {
	c.omu.Lock()
	defer c.omu.Unlock()
	// The state changes under omu, so release (which takes omu after it
	// sees pendingAbandoned) finds p registered.
	if !p.state.CompareAndSwap(pendingRunning, pendingAbandoned) {
		return false
	}
	p.done = make(chan struct{})
	if c.abandoned == nil {
		c.abandoned = make(map[*pending]struct{})
	}
	c.abandoned[p] = struct{}{}
	c.nAbandoned.Add(1)
	return true
}

// release unregisters the abandoned call p, whose f has returned, and
// wakes the calls waiting for it.
func (c *Conn) release(p *pending) {
	c.omu.Lock()
	defer c.omu.Unlock()
	delete(c.abandoned, p)
	c.nAbandoned.Add(-1)
	close(p.done)
}

// waitAbandoned waits until the f of every call abandoned so far has
// returned. It returns ctx.Err() if ctx ends first, and the Conn's finished
// error if the Conn is closed or its session expires first.
func (c *Conn) waitAbandoned(ctx context.Context) error {
	c.omu.Lock()
	waits := make([]chan struct{}, 0, len(c.abandoned))
	for p := range c.abandoned {
		waits = append(waits, p.done)
	}
	c.omu.Unlock()
	for _, done := range waits {
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.closedCh:
			return c.finishedErr()
		case <-c.expiredCh:
			return c.finishedErr()
		}
	}
	return nil
}

func (c *Conn) finishedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.finishedErrLocked()
}

// mapErr maps err with mapError, and turns a connection failure caused by
// the Conn's end into the reason it ended.
func (c *Conn) mapErr(err error) error {
	mapped := mapError(err)
	if mapped == nil {
		return nil
	}
	if errors.Is(mapped, zksim.ErrConnectionLoss) || errors.Is(mapped, zksim.ErrClosing) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if finished := c.finishedErrLocked(); finished != nil {
			return finished
		}
	}
	return mapped
}

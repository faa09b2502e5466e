package zkwire

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zksim/zksim/zkmem"
)

// ErrUnknownSession is returned for a session id the server does not know
// or that is no longer alive.
var ErrUnknownSession = errors.New("zkwire: unknown session")

// ErrUnknownOp is returned for an op name ZooKeeper does not have.
var ErrUnknownOp = errors.New("zkwire: unknown op name")

// Control is the fault control handle of one session: what the server
// does to it and to its client's connection. It drives zkmem's fault plane
// (zkmem.Control, the same controls the simulator and the in-process Conn
// meet) and realises each fault on the TCP connection.
type Control struct {
	srv *Server
	zc  *zkmem.Control
}

// Control returns the control handle of the live session id.
func (s *Server) Control(id int64) (*Control, error) {
	zc := s.zk.Control(id)
	if zc == nil {
		return nil, fmt.Errorf("%w: 0x%x", ErrUnknownSession, id)
	}
	return &Control{srv: s, zc: zc}, nil
}

// SessionID returns the id of the session.
func (c *Control) SessionID() int64 { return c.zc.SessionID() }

// fired notes a fault the control ordered in the session's record.
func (c *Control) fired(fault string) {
	c.srv.note(c.srv.ledger.record(c.SessionID(), "", 0), fault, "", "")
}

// ZK returns zkmem's control handle of the session, for what this one does
// not wrap (Control.SetFaultHook).
func (c *Control) ZK() *zkmem.Control { return c.zc }

// Expire makes the server expire the session now: its ephemerals go in one
// transaction, other sessions' watches fire, and its connection closes; the
// client learns when it reconnects.
func (c *Control) Expire() {
	c.fired("expire")
	ws := c.srv.session(c.SessionID())
	if ws != nil {
		ws.unpause(c.zc)
	}
	c.zc.Expire()
	if ws != nil {
		if conn := ws.current(); conn != nil {
			conn.close()
		}
	}
}

// Disconnect closes the session's connection; the session lives until its
// timeout, and the client may resume it from a new connection.
func (c *Control) Disconnect() {
	c.fired("disconnect")
	c.zc.Disconnect()
}

// LoseNextReply arms a lost reply: the next request with the op name given
// (ZooKeeper's: "create", "getData", "multi"...; "" for any client request)
// is applied by the server, then the connection closes before its reply.
func (c *Control) LoseNextReply(op string) error {
	return c.LoseReplies(Aim{Op: op})
}

// DropNextRequest arms a dropped request: the next request with the op
// name given ("" for any client request) is not applied, and the
// connection closes.
func (c *Control) DropNextRequest(op string) error {
	return c.DropRequests(Aim{Op: op})
}

// Aim picks the requests of a session a fault hits: the next Count of
// them (0 counts as 1) with the op name Op ("" for any client request),
// on Path ("" for any). Path "/app/lock" aims at /app/lock and the nodes
// under it, "/app/lock/" only at the nodes under it (the lock nodes a
// recipe creates, and not the create of /app/lock a client's ensure-path
// sends); a create's path is the one the client sent, before a sequential
// node's suffix; a multi is hit if one of its ops is (see zkmem.Aim).
type Aim struct {
	Op    string
	Path  string
	Count int
}

// zkmem checks a and returns it as zkmem's Aim; its error names the bad
// field as the control endpoint's parameter (op, path, count).
func (a Aim) zkmem() (zkmem.Aim, error) {
	o, err := opByName(a.Op)
	if err != nil {
		return zkmem.Aim{}, fmt.Errorf("op: %w", err)
	}
	switch {
	case a.Path != "" && !strings.HasPrefix(a.Path, "/"):
		return zkmem.Aim{}, fmt.Errorf("path: %q does not start with /", a.Path)
	case a.Count < 0:
		return zkmem.Aim{}, fmt.Errorf("count: %d is negative", a.Count)
	case a.Count == 0:
		a.Count = 1
	}
	return zkmem.Aim{Op: o, Path: a.Path, Count: a.Count}, nil
}

// LoseReplies arms lost replies for the requests a aims at: each is
// applied by the server, then the connection closes before its reply. It
// arms nothing and returns an error naming the field for a bad Aim.
func (c *Control) LoseReplies(a Aim) error { return c.armFault(zkmem.LoseReply, a) }

// DropRequests arms dropped requests for the requests a aims at: each is
// not applied, and the connection closes. It arms nothing and returns an
// error naming the field for a bad Aim.
func (c *Control) DropRequests(a Aim) error { return c.armFault(zkmem.DropRequest, a) }

func (c *Control) armFault(f zkmem.ConnFault, a Aim) error {
	za, err := a.zkmem()
	if err != nil {
		return err
	}
	return c.zc.Arm(f, za)
}

// opByName maps a wire op name to zkmem's Op: zkmem's names, and the wire
// variants of one Op ("create2", "createTTL", "createContainer" are
// "create"; "getChildren2" is "getChildren"; "auth" is "addAuth";
// "setWatches2" is "setWatches").
func opByName(name string) (zkmem.OpCode, error) {
	if name == "" {
		return zkmem.OpAny, nil
	}
	switch name {
	case "create2", "createTTL", "createContainer":
		return zkmem.OpCreate, nil
	case "getChildren2":
		return zkmem.OpGetChildren, nil
	case "auth":
		return zkmem.OpAddAuth, nil
	case "setWatches2":
		return zkmem.OpSetWatches, nil
	}
	for o := zkmem.OpAny + 1; !strings.HasPrefix(o.String(), "Op("); o++ {
		if o.String() == name {
			return o, nil
		}
	}
	return 0, fmt.Errorf("%w: %q", ErrUnknownOp, name)
}

// Pause makes the server stop hearing the client: nothing more is read
// from its connection, pings included, so the session expires after its
// timeout unless Resume comes first; then the connection closes.
func (c *Control) Pause() {
	c.fired("pause")
	if ws := c.srv.session(c.SessionID()); ws != nil {
		ws.pause(c.zc)
		return
	}
	c.zc.Pause()
}

// Resume ends a Pause: the requests the client sent meanwhile are read and
// answered in order.
func (c *Control) Resume() {
	c.fired("resume")
	if ws := c.srv.session(c.SessionID()); ws != nil {
		ws.unpause(c.zc)
		return
	}
	c.zc.Resume()
}

// Delay holds the session's replies and notifications for d from now; they
// leave in order when it ends.
func (c *Control) Delay(d time.Duration) {
	c.fired("delay")
	c.zc.Delay(d)
}

func parseSessionID(s string) (int64, error) {
	var (
		u   uint64
		err error
	)
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		u, err = strconv.ParseUint(h, 16, 64)
	} else {
		var v int64
		v, err = strconv.ParseInt(s, 10, 64)
		u = uint64(v)
	}
	if err != nil {
		return 0, fmt.Errorf("session id %q: not a decimal or 0x-hex number", s)
	}
	return int64(u), nil
}

package zkwire

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire/jute"
)

// An ensemble over the wire: one port per member, each connection's
// session attached to the member whose port it came to.

// NewEnsemble returns a server fronting ens, one member per port: serve
// member i's port with ServeMember. A session opened or resumed through
// member i's port is attached to member i (zkmem.Ensemble.OpenSessionAt,
// ResumeSessionAt): its reads and watches are served from i's applied
// state, its writes go through the leader and are answered once i applied
// them, and sync waits for i to apply what the leader committed. The
// handshake follows ZooKeeper 3.8's rules: a member in read-only mode
// answers a client that sent readOnly=true with the ConnectResponse's
// readOnly flag set, and closes the connection of any other client; a
// member that has not applied the client's last zxid, or that does not
// serve (no leader to follow), closes the connection without an answer; a
// crashed member's port closes every connection it accepts. Serve (the
// server's own port, with no member) attaches sessions to the leader.
// The Go methods take members by their 0-based index in ens; the control
// endpoint's routes and GET /servers number them from 1, as ZooKeeper's
// myid.
func NewEnsemble(ens *zkmem.Ensemble, opts Options) *Server {
	s := New(ens.Server(), opts)
	s.ens = ens
	s.leaderSince = s.start
	return s
}

// Ensemble returns the ensemble behind s, or nil for a server of New.
func (s *Server) Ensemble() *zkmem.Ensemble { return s.ens }

// ErrNotEnsemble is returned by the member controls of a server that
// fronts one zkmem.Server (New) rather than an ensemble.
var ErrNotEnsemble = errors.New("zkwire: not an ensemble (a standalone server has no members)")

// ServeMember serves member i's port on ln until Close, as Serve serves
// the server's. It fails at once for a server of New or a member that
// does not exist.
func (s *Server) ServeMember(i int, ln net.Listener) error {
	if err := s.checkMember(i); err != nil {
		ln.Close()
		return err
	}
	return s.serve(ln, i)
}

// checkMember reports a server without members, or a member index out of
// range, as an error.
func (s *Server) checkMember(i int) error {
	if s.ens == nil {
		return ErrNotEnsemble
	}
	if i < 0 || i >= s.ens.Size() {
		return fmt.Errorf("zkwire: no member %d in an ensemble of %d (members are 0 to %d)", i, s.ens.Size(), s.ens.Size()-1)
	}
	return nil
}

// MemberAction is a control of one member (Server.ControlMember).
type MemberAction string

// The member controls, as zkmem.Ensemble's.
const (
	MemberLag     MemberAction = "lag"      // stop applying commits (Ensemble.Lag)
	MemberCatchUp MemberAction = "catch-up" // apply what it missed, and keep up (Ensemble.CatchUp)
	MemberCrash   MemberAction = "crash"    // stop (Ensemble.Crash): its port closes every connection
	MemberRestart MemberAction = "restart"  // start again and catch up (Ensemble.Restart)
	MemberIsolate MemberAction = "isolate"  // cut off from the quorum (Ensemble.Isolate)
	MemberHeal    MemberAction = "heal"     // rejoin the quorum (Ensemble.Heal)
)

// MemberActions lists the member controls, in the order the control
// endpoint lists them.
var MemberActions = []MemberAction{MemberLag, MemberCatchUp, MemberCrash, MemberRestart, MemberIsolate, MemberHeal}

// ControlMember applies action to member i, and then, as a real ensemble
// elects a leader by itself, elects one at once if the ensemble has none
// and a quorum is left (zkmem.Ensemble.Elect); without a quorum, the
// members stay without a leader (serving read-only clients only, in
// read-only mode) until a restart or heal brings one back. Clients of a
// member that crashes or is cut off have their connections closed and
// move to the next server of their connect string. It returns once done;
// it fails for a server without members, a member that does not exist,
// or an unknown action.
func (s *Server) ControlMember(i int, action MemberAction) error {
	if err := s.checkMember(i); err != nil {
		return err
	}
	e := s.ens
	var f func(int)
	switch action {
	case MemberLag:
		f = e.Lag
	case MemberCatchUp:
		f = e.CatchUp
	case MemberCrash:
		f = e.Crash
	case MemberRestart:
		f = e.Restart
	case MemberIsolate:
		f = e.Isolate
	case MemberHeal:
		f = e.Heal
	default:
		return fmt.Errorf("zkwire: unknown member control %q (one of %v)", action, MemberActions)
	}
	f(i)
	s.logf("member %d: %s", i, action)
	if e.Leader() < 0 {
		if l, err := e.Elect(); err == nil {
			s.mu.Lock()
			s.leaderSince = time.Now()
			s.mu.Unlock()
			s.logf("member %d leads", l)
		}
	}
	return nil
}

// MemberStatus is one member as the control endpoint's GET /servers
// reports it.
type MemberStatus struct {
	// ID is the member's myid: its index in the zkmem.Ensemble plus one,
	// as the control routes /servers/{n} and zksim serve number members.
	ID int `json:"id"`
	// Role is "leader", "follower", "observer", "read-only", "looking"
	// (up, but no leader to follow) or "down" (crashed).
	Role string `json:"role"`
	// Applied is the zxid of the last transaction the member applied;
	// AppliedHex the same in hexadecimal, 0x-prefixed.
	Applied    int64  `json:"applied"`
	AppliedHex string `json:"appliedHex"`
	// Pending is how many committed transactions it has not applied.
	Pending int `json:"pending"`
	// Lagging: it does not apply commits (Lag) until catch-up.
	Lagging bool `json:"lagging"`
	// Sessions are the ids of the sessions connected to it, in order.
	Sessions []int64 `json:"sessions"`
}

// Members reports every member, in order; nil for a server without
// members.
func (s *Server) Members() []MemberStatus {
	if s.ens == nil {
		return nil
	}
	e := s.ens
	out := make([]MemberStatus, e.Size())
	for i := range out {
		sessions := e.Sessions(i)
		if sessions == nil {
			sessions = []int64{}
		}
		applied := e.Applied(i)
		out[i] = MemberStatus{
			ID: i + 1, Role: e.Role(i).String(), Applied: applied, AppliedHex: fmt.Sprintf("0x%x", applied),
			Pending: e.Pending(i), Lagging: e.Lagging(i), Sessions: sessions,
		}
	}
	return out
}

// openSession opens the handshake's new session: on the connection's
// member for a connection to an ensemble member's port, else on the
// server (on an ensemble's server, the leader). ro reports a read-only
// session.
func (c *conn) openSession(req *jute.ConnectRequest) (zs *zkmem.Session, ro bool, err error) {
	timeout := time.Duration(req.TimeOut) * time.Millisecond
	if c.member >= 0 {
		return c.srv.ens.OpenSessionAt(c.member, timeout, req.LastZxidSeen, c.from, (*sink)(c), req.ReadOnly)
	}
	zs, err = c.srv.zk.OpenSession(timeout, c.from, (*sink)(c))
	return zs, false, err
}

// resumeSession resumes the handshake's session, as openSession opens one.
func (c *conn) resumeSession(req *jute.ConnectRequest) (zs *zkmem.Session, ro bool, err error) {
	if c.member >= 0 {
		return c.srv.ens.ResumeSessionAt(c.member, req.SessionID, req.Passwd, req.LastZxidSeen, c.from, (*sink)(c), req.ReadOnly)
	}
	zs, err = c.srv.zk.ResumeSession(req.SessionID, req.Passwd, req.LastZxidSeen, c.from, (*sink)(c))
	return zs, false, err
}

// lastZxid is the last zxid of the state the connection is served from:
// its member's applied state, or the server's.
func (c *conn) lastZxid() int64 {
	if c.member >= 0 {
		return c.srv.ens.Applied(c.member)
	}
	return c.srv.zk.LastZxid()
}

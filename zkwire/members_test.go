package zkwire_test

import (
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

// newTestEnsemble starts 3 members over the wire, read-only mode on; the
// last member, 2, leads.
func newTestEnsemble(t *testing.T) *zkwire.TestEnsemble {
	t.Helper()
	return zkwire.NewTestEnsemble(t, 3, zkmem.EnsembleOptions{
		Options:  zkmem.Options{TickTime: 100 * time.Millisecond, MaxSessionTimeout: 10 * time.Second},
		ReadOnly: true,
	}, zkwire.Options{})
}

// ctlMember applies a member control, failing t on error.
func ctlMember(t *testing.T, te *zkwire.TestEnsemble, i int, a zkwire.MemberAction) {
	t.Helper()
	if err := te.ControlMember(i, a); err != nil {
		t.Fatal(err)
	}
}

// orderedHosts is a go-zookeeper HostProvider that walks its servers in
// the order it was made with, cyclically (go-zookeeper shuffles the list
// it hands Init), without pausing after a round.
type orderedHosts struct {
	mu      sync.Mutex
	servers []string
	next    int
}

func (h *orderedHosts) Init([]string) error { return nil }
func (h *orderedHosts) Len() int            { return len(h.servers) }
func (h *orderedHosts) Connected()          {}
func (h *orderedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.servers[h.next]
	h.next = (h.next + 1) % len(h.servers)
	return s, false
}

// dialMembers connects go-zookeeper to the members' addresses, tried in
// order, and waits for its session.
func dialMembers(t *testing.T, addrs ...string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, events, err := zk.Connect(addrs, 5*time.Second, quiet, zk.WithHostProvider(&orderedHosts{servers: addrs}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	waitState(t, events, zk.StateHasSession)
	return c, events
}

// TestMemberPortReadsItsMember: a session that came through a member's
// port is attached to that member; a lagging member serves stale reads,
// answers its client's own write only once it applied it, and sync waits
// for it to apply what the leader committed.
func TestMemberPortReadsItsMember(t *testing.T) {
	te := newTestEnsemble(t)
	ens := te.Ensemble()
	c0, _ := dialMembers(t, te.Addr(0))
	c2, _ := dialMembers(t, te.Addr(2))
	if got := ens.Sessions(0); !slices.Equal(got, []int64{c0.SessionID()}) {
		t.Fatalf("member 0's sessions %x, want [%x]", got, c0.SessionID())
	}
	if got := ens.Sessions(2); !slices.Equal(got, []int64{c2.SessionID()}) {
		t.Fatalf("member 2's sessions %x, want [%x]", got, c2.SessionID())
	}

	ctlMember(t, te, 0, zkwire.MemberLag)
	if _, err := c2.Create("/x", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c0.Get("/x"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("read on the lagging member: %v, want the stale ErrNoNode", err)
	}
	if ens.Pending(0) != 1 {
		t.Fatalf("member 0 pending %d, want 1", ens.Pending(0))
	}
	// ApplyNext-sized steps: sync and the client's own write wait for the
	// member.
	synced := make(chan error, 1)
	go func() { _, err := c0.Sync("/x"); synced <- err }()
	created := make(chan error, 1)
	go func() {
		<-synced // in order: the sync's reply first
		_, err := c0.Create("/y", nil, 0, zk.WorldACL(zk.PermAll))
		created <- err
	}()
	ctlMember(t, te, 0, zkwire.MemberCatchUp)
	if err := <-created; err != nil {
		t.Fatalf("own write on the caught-up member: %v", err)
	}
	if data, _, err := c0.Get("/x"); err != nil || string(data) != "1" {
		t.Fatalf("read after sync and catch-up: %q %v", data, err)
	}
	if _, _, err := c0.Get("/y"); err != nil {
		t.Fatalf("read your own write: %v", err)
	}
}

// TestMemberRefusesClientAhead: a member that has not applied the last
// zxid a client saw closes its connection without an answer, and the
// session stays where it was; another member takes the session, which
// keeps its ephemeral, and closes the old connection.
func TestMemberRefusesClientAhead(t *testing.T) {
	te := newTestEnsemble(t)
	ens := te.Ensemble()
	ctlMember(t, te, 0, zkwire.MemberLag)
	r := dialRaw(t, te.Addr(2))
	resp := r.connect(newSession)
	h, _ := r.call(1, jute.OpCreate, &jute.CreateRequest{Path: "/e", ACL: openACL, Flags: 1})
	if h.Err != 0 {
		t.Fatalf("create: %+v", h)
	}
	resume := jute.ConnectRequest{TimeOut: 5000, SessionID: resp.SessionID, Passwd: resp.Passwd, LastZxidSeen: h.Zxid, HasReadOnly: true}

	behind := dialRaw(t, te.Addr(0))
	behind.sendFrame(&resume)
	behind.closed()
	if got := ens.Sessions(2); !slices.Equal(got, []int64{resp.SessionID}) {
		t.Fatalf("after the refusal member 2's sessions are %x, want [%x]", got, resp.SessionID)
	}

	moved := dialRaw(t, te.Addr(1))
	if mr := moved.connect(resume); mr.SessionID != resp.SessionID || mr.ReadOnly {
		t.Fatalf("resume on member 1: %+v", mr)
	}
	r.closed()
	if got := ens.Sessions(1); !slices.Equal(got, []int64{resp.SessionID}) {
		t.Fatalf("member 1's sessions %x, want [%x]", got, resp.SessionID)
	}
	if gh, _ := moved.call(2, jute.OpExists, &jute.PathWatchRequest{Path: "/e"}); gh.Err != 0 || gh.Zxid != h.Zxid {
		t.Fatalf("the ephemeral after the move: %+v", gh)
	}
	ctlMember(t, te, 0, zkwire.MemberCatchUp)
}

// TestMemberMoveKeepsWatches: go-zookeeper, given two members, loses its
// member to a crash, moves to the other with its session, ephemeral and
// watch (setWatches), and hears the change made meanwhile.
func TestMemberMoveKeepsWatches(t *testing.T) {
	te := newTestEnsemble(t)
	c, events := dialMembers(t, te.Addr(0), te.Addr(1))
	if _, err := c.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/w", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, watch, err := c.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	ctlMember(t, te, 0, zkwire.MemberCrash)
	waitState(t, events, zk.StateDisconnected)
	other, _ := dialMembers(t, te.Addr(2))
	if _, err := other.Set("/w", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	waitState(t, events, zk.StateHasSession)
	if ev := waitEvent(t, watch); ev.Type != zk.EventNodeDataChanged || ev.Path != "/w" {
		t.Fatalf("watch after the move: %+v", ev)
	}
	if got := te.Ensemble().Sessions(1); !slices.Contains(got, c.SessionID()) {
		t.Fatalf("member 1's sessions %x lack the moved session %x", got, c.SessionID())
	}
	if ok, _, err := other.Exists("/eph"); err != nil || !ok {
		t.Fatalf("the moved session's ephemeral: %v %v", ok, err)
	}
}

// TestMemberReadOnly: an isolated member answers a client that allows
// read-only mode as a read-only server (the ConnectResponse's flag, reads
// from its state, writes refused NotReadOnly) and closes the connection of
// any other client; its four-letter words say read-only.
func TestMemberReadOnly(t *testing.T) {
	te := newTestEnsemble(t)
	w := dialRaw(t, te.Addr(2))
	w.connect(newSession)
	if h, _ := w.call(1, jute.OpCreate, &jute.CreateRequest{Path: "/ro", Data: []byte("a"), ACL: openACL}); h.Err != 0 {
		t.Fatalf("create: %+v", h)
	}
	ctlMember(t, te, 0, zkwire.MemberIsolate)
	if role := te.Ensemble().Role(0); role != zkmem.RoleReadOnly {
		t.Fatalf("isolated member's role %v", role)
	}

	rw := dialRaw(t, te.Addr(0))
	rw.sendFrame(&jute.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16), HasReadOnly: true})
	rw.closed()

	ro := dialRaw(t, te.Addr(0))
	if resp := ro.connect(jute.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true}); !resp.ReadOnly || resp.SessionID == 0 {
		t.Fatalf("read-only connect: %+v", resp)
	}
	if h, body := ro.call(1, jute.OpGetData, &jute.PathWatchRequest{Path: "/ro"}); h.Err != 0 || !strings.Contains(string(body), "a") {
		t.Fatalf("read on the read-only member: %+v %q", h, body)
	}
	if h, _ := ro.call(2, jute.OpCreate, &jute.CreateRequest{Path: "/no", ACL: openACL}); h.Err != int32(zksim.CodeOf(zksim.ErrNotReadOnly)) {
		t.Fatalf("write on the read-only member: %+v, want NotReadOnly", h)
	}
	srvr := word(t, te.Addr(0), "srvr")
	if !strings.Contains(srvr, "\nREAD-ONLY mode; serving only read-only clients\n") || !strings.Contains(srvr, "\nMode: read-only\n") {
		t.Fatalf("srvr of the read-only member:\n%s", srvr)
	}
	if got := word(t, te.Addr(0), "isro"); got != "ro" {
		t.Fatalf("isro %q", got)
	}
	ctlMember(t, te, 0, zkwire.MemberHeal)
	ro.closed() // leaving read-only mode drops its clients
	if got := word(t, te.Addr(0), "isro"); got != "rw" {
		t.Fatalf("isro after heal %q", got)
	}
}

// TestMemberCrashAndFailover: a crashed member's port closes every
// connection unanswered, four-letter words included; crashing the leader
// elects the next; a restarted member serves again; srvr and mntr report
// each member's mode.
func TestMemberCrashAndFailover(t *testing.T) {
	te := newTestEnsemble(t)
	modes := func() []string {
		var out []string
		for i := range 3 {
			srvr := word(t, te.Addr(i), "srvr")
			_, mode, _ := strings.Cut(srvr, "\nMode: ")
			mode, _, _ = strings.Cut(mode, "\n")
			out = append(out, mode)
		}
		return out
	}
	if got := modes(); !slices.Equal(got, []string{"follower", "follower", "leader"}) {
		t.Fatalf("modes %v", got)
	}
	if srvr := word(t, te.Addr(2), "srvr"); !strings.HasSuffix(srvr, "\nProposal sizes last/min/max: -1/-1/-1\n") {
		t.Fatalf("leader's srvr:\n%s", srvr)
	}
	mntr := word(t, te.Addr(2), "mntr")
	for _, row := range []string{"zk_server_state\tleader\n", "zk_learners\t2\n", "zk_synced_followers\t2\n"} {
		if !strings.Contains(mntr, row) {
			t.Fatalf("leader's mntr lacks %q:\n%s", row, mntr)
		}
	}
	if mntr := word(t, te.Addr(0), "mntr"); !strings.Contains(mntr, "zk_server_state\tfollower\n") || strings.Contains(mntr, "zk_learners") {
		t.Fatalf("follower's mntr:\n%s", mntr)
	}

	ctlMember(t, te, 2, zkwire.MemberCrash)
	down := dialRaw(t, te.Addr(2))
	if b, err := io.ReadAll(down.br); err != nil || len(b) != 0 {
		t.Fatalf("a crashed member's port sent %q, %v", b, err)
	}
	if got := te.Ensemble().Leader(); got != 1 {
		t.Fatalf("leader after the crash: %d, want 1", got)
	}
	c, _ := dialMembers(t, te.Addr(2), te.Addr(1))
	if got := te.Ensemble().Sessions(1); !slices.Equal(got, []int64{c.SessionID()}) {
		t.Fatalf("member 1's sessions %x", got)
	}
	ctlMember(t, te, 2, zkwire.MemberRestart)
	if got := modes(); !slices.Equal(got, []string{"follower", "leader", "follower"}) {
		t.Fatalf("modes after restart %v", got)
	}

	// Two members down: no quorum, the last one turns read-only.
	ctlMember(t, te, 2, zkwire.MemberCrash)
	ctlMember(t, te, 1, zkwire.MemberCrash)
	if srvr := word(t, te.Addr(0), "srvr"); !strings.Contains(srvr, "\nMode: read-only\n") {
		t.Fatalf("the last member's srvr without a quorum:\n%s", srvr)
	}
	ctlMember(t, te, 1, zkwire.MemberRestart)
	if got := te.Ensemble().Leader(); got != 1 {
		t.Fatalf("leader after the quorum came back: %d, want 1", got)
	}
	if err := te.ControlMember(3, zkwire.MemberCrash); err == nil || !strings.Contains(err.Error(), "no member 3 in an ensemble of 3") {
		t.Fatalf("a control of member 3 of 3: %v", err)
	}
}

// TestMemberWithoutQuorum: without read-only mode, a member left without
// a quorum runs no server: it answers srvr with ZooKeeper's "not
// currently serving", isro with null, and closes every client's
// connection unanswered.
func TestMemberWithoutQuorum(t *testing.T) {
	te := zkwire.NewTestEnsemble(t, 3, zkmem.EnsembleOptions{Options: zkmem.Options{TickTime: 100 * time.Millisecond}}, zkwire.Options{})
	ctlMember(t, te, 2, zkwire.MemberCrash)
	ctlMember(t, te, 1, zkwire.MemberCrash)
	if got := word(t, te.Addr(0), "srvr"); got != "This ZooKeeper instance is not currently serving requests\n" {
		t.Fatalf("srvr without a quorum: %q", got)
	}
	if got := word(t, te.Addr(0), "isro"); got != "null" {
		t.Fatalf("isro without a quorum: %q", got)
	}
	for _, readOnly := range []bool{false, true} {
		looking := dialRaw(t, te.Addr(0))
		looking.sendFrame(&jute.ConnectRequest{TimeOut: 5000, Passwd: make([]byte, 16), ReadOnly: readOnly, HasReadOnly: true})
		looking.closed()
	}
}

// TestMemberRequestsAreHeartbeats: a client that pinged once and then
// only sends requests, never silent for its session timeout, keeps its
// session on a member, as on a standalone server.
func TestMemberRequestsAreHeartbeats(t *testing.T) {
	te := newTestEnsemble(t)
	r := dialRaw(t, te.Addr(0))
	resp := r.connect(jute.ConnectRequest{TimeOut: 400, Passwd: make([]byte, 16), HasReadOnly: true})
	if resp.TimeOut != 400 {
		t.Fatalf("negotiated %dms, want 400", resp.TimeOut)
	}
	r.sendFrame(&jute.RequestHeader{Xid: jute.XidPing, Type: jute.OpPing})
	r.reply(jute.XidPing)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for xid := int32(1); xid <= 12; xid++ { // 1.2s: three timeouts
		<-tick.C
		if h, _ := r.call(xid, jute.OpExists, &jute.PathWatchRequest{Path: "/zookeeper"}); h.Err != 0 {
			t.Fatalf("exists %d: %+v", xid, h)
		}
	}
	if got := te.Ensemble().Sessions(0); !slices.Equal(got, []int64{resp.SessionID}) {
		t.Fatalf("member 0's sessions %x, want [%x]", got, resp.SessionID)
	}
}

// TestMemberCloseWhileLagging: a closeSession that waits for its lagging
// member to apply it does not hold up the server's Close: the reader
// waiting for it is let go.
func TestMemberCloseWhileLagging(t *testing.T) {
	te, err := zkwire.StartEnsemble(3, zkmem.EnsembleOptions{Options: zkmem.Options{TickTime: 100 * time.Millisecond}}, zkwire.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := dialRaw(t, te.Addr(0))
	r.connect(newSession)
	ctlMember(t, te, 0, zkwire.MemberLag)
	r.sendFrame(&jute.RequestHeader{Xid: 1, Type: jute.OpCloseSession})
	// The session ends on the leader at once; its reply waits for member 0.
	for len(te.Ensemble().Server().SessionIDs()) != 0 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() {
		te.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s")
	}
	r.closed()
}

// TestMemberObserver: an observer's srvr and mntr say so, and the
// leader's mntr counts it among its learners as a synced observer.
func TestMemberObserver(t *testing.T) {
	te := zkwire.NewTestEnsemble(t, 3, zkmem.EnsembleOptions{Options: zkmem.Options{TickTime: 100 * time.Millisecond}, Observers: 1}, zkwire.Options{})
	if srvr := word(t, te.Addr(2), "srvr"); !strings.Contains(srvr, "\nMode: observer\n") {
		t.Fatalf("the observer's srvr:\n%s", srvr)
	}
	if mntr := word(t, te.Addr(2), "mntr"); !strings.Contains(mntr, "zk_server_state\tobserver\nzk_") ||
		!strings.Contains(mntr, "zk_peer_state\tobserving - broadcast\nzk_quorum_size\t2\n") {
		t.Fatalf("the observer's mntr:\n%s", mntr)
	}
	mntr := word(t, te.Addr(1), "mntr") // the highest voting member leads
	for _, row := range []string{"zk_server_state\tleader\n", "zk_learners\t2\n", "zk_synced_followers\t1\n", "zk_synced_observers\t1\n"} {
		if !strings.Contains(mntr, row) {
			t.Fatalf("the leader's mntr lacks %q:\n%s", row, mntr)
		}
	}
}

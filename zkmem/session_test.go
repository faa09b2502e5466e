package zkmem_test

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// recorder is a Sink that writes down what it hears, in order.
type recorder struct {
	mu  sync.Mutex
	log []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

func (r *recorder) Reply(req *zkmem.Request, resp *zkmem.Response) {
	r.add("reply %v err=%v zxid=%d", req, resp.Err, resp.Zxid)
}

func (r *recorder) Event(ev zksim.Event, zxid int64) {
	r.add("event %v %s zxid=%d", ev.Type, ev.Path, zxid)
}

func (r *recorder) Closed(err error) { r.add("closed %v", err) }

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.log
	r.log = nil
	return out
}

func open(t *testing.T, srv *zkmem.Server, timeout time.Duration) (*zkmem.Session, *recorder) {
	t.Helper()
	rec := &recorder{}
	sess, err := srv.OpenSession(timeout, zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	return sess, rec
}

func mkdir(t *testing.T, sess *zkmem.Session, path string) {
	t.Helper()
	resp := sess.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: path, Mode: zksim.ModePersistent, ACL: zksim.OpenACL(), TTL: -1})
	require.NoError(t, resp.Err)
}

func TestOpNames(t *testing.T) {
	for op, name := range map[zkmem.OpCode]string{
		zkmem.OpAny: "any", zkmem.OpCreate: "create", zkmem.OpGetData: "getData", zkmem.OpGetChildren: "getChildren",
		zkmem.OpMulti: "multi", zkmem.OpPing: "ping", zkmem.OpCloseSession: "closeSession", zkmem.OpSetWatches: "setWatches",
		zkmem.OpWhoAmI: "whoAmI", zkmem.OpCheck: "check", zkmem.OpMultiRead: "multiRead", zkmem.OpCheckWatches: "checkWatches",
	} {
		require.Equal(t, name, op.String())
	}
}

func TestSessionSinkHearsRepliesAndEventsInServerOrder(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, recA := open(t, srv, 10*time.Second)
	b, _ := open(t, srv, 10*time.Second)
	mkdir(t, a, "/x")
	recA.take()

	get := a.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/x", Watch: true})
	require.NoError(t, get.Err)
	set := b.Do(&zkmem.Request{Op: zkmem.OpSetData, Path: "/x", Data: []byte("v"), Version: -1})
	require.NoError(t, set.Err)
	require.Equal(t, int32(1), set.Stat.Version)
	require.Equal(t, []string{
		fmt.Sprintf("reply getData /x err=<nil> zxid=%d", get.Zxid),
		fmt.Sprintf("event EventNodeDataChanged /x zxid=%d", set.Zxid),
	}, recA.take())
}

func TestLoseNextReplyAppliesAndClosesTheConnection(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, rec := open(t, srv, 10*time.Second)
	ctl := srv.Control(a.ID())
	ctl.LoseNextReply(zkmem.OpCreate)

	resp := a.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/n"})
	require.NoError(t, resp.Err, "armed for create only")
	resp = a.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/n", ACL: zksim.OpenACL(), TTL: -1})
	require.Equal(t, zkmem.LoseReply, resp.Fault)
	require.True(t, resp.Closed)
	require.ErrorIs(t, resp.Err, zksim.ErrConnectionLoss)
	require.Equal(t, []string{"reply exists /n err=<nil> zxid=1"}, rec.take(), "no reply for the lost one")

	resp = a.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/n"})
	require.ErrorIs(t, resp.Err, zksim.ErrConnectionLoss, "detached until resumed")

	again, err := srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid(), zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	require.Same(t, a, again)
	resp = a.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/n"})
	require.NoError(t, resp.Err)
	require.NotNil(t, resp.Stat, "the create was applied")
}

func TestDropNextRequestIsNotApplied(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, rec := open(t, srv, 10*time.Second)
	srv.Control(a.ID()).DropNextRequest(zkmem.OpAny)
	before := srv.LastZxid()
	resp := a.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/n", ACL: zksim.OpenACL(), TTL: -1})
	require.Equal(t, zkmem.DropRequest, resp.Fault)
	require.True(t, resp.Closed)
	require.Equal(t, before, srv.LastZxid())
	require.Empty(t, rec.take())
}

func TestFaultHookIsToldTheArmedFault(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, _ := open(t, srv, 10*time.Second)
	ctl := srv.Control(a.ID())
	var told []zkmem.ConnFault
	ctl.SetFaultHook(func(r zkmem.Request, armed zkmem.ConnFault) zkmem.ConnFault {
		told = append(told, armed)
		return armed
	})
	ctl.DropNextRequest(zkmem.OpSync)
	a.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/"})
	resp := a.Do(&zkmem.Request{Op: zkmem.OpSync, Path: "/"})
	require.Equal(t, zkmem.DropRequest, resp.Fault)
	require.Equal(t, []zkmem.ConnFault{zkmem.NoFault, zkmem.DropRequest}, told)
}

func TestResumeSessionChecksPasswordAndZxid(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, rec := open(t, srv, 10*time.Second)
	require.Len(t, a.Password(), 16)
	a.Detach()
	bad := append([]byte(nil), a.Password()...)
	bad[0] ^= 1
	_, err := srv.ResumeSession(a.ID(), bad, 0, zkmem.DefaultClientAddr, rec)
	require.ErrorIs(t, err, zksim.ErrSessionExpired)
	_, err = srv.ResumeSession(a.ID()+100, a.Password(), 0, zkmem.DefaultClientAddr, rec)
	require.ErrorIs(t, err, zksim.ErrSessionExpired)
	_, err = srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid()+1, zkmem.DefaultClientAddr, rec)
	require.ErrorIs(t, err, zkmem.ErrZxidAhead)
	_, err = srv.ResumeSession(a.ID(), a.Password(), srv.LastZxid(), zkmem.DefaultClientAddr, rec)
	require.NoError(t, err)
	srv.Control(a.ID()).Expire()
	require.Equal(t, []string{"closed zk: session has expired"}, rec.take())
	_, err = srv.ResumeSession(a.ID(), a.Password(), 0, zkmem.DefaultClientAddr, rec)
	require.ErrorIs(t, err, zksim.ErrSessionExpired)
}

func TestDisconnectKeepsTheSessionUntilItsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		a, rec := open(t, srv, 4*time.Second)
		require.Equal(t, 4*time.Second, a.Timeout())
		srv.Control(a.ID()).Disconnect()
		require.Equal(t, []string{"closed zk: connection lost: the request may or may not have been applied"}, rec.take())
		time.Sleep(3 * time.Second)
		require.Contains(t, srv.SessionIDs(), a.ID())
		time.Sleep(2 * time.Second)
		require.NotContains(t, srv.SessionIDs(), a.ID())
	})
}

func TestPingedSessionExpiresWhenSilent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		a, rec := open(t, srv, 4*time.Second)
		for range 5 {
			require.NoError(t, a.Ping().Err)
			time.Sleep(3 * time.Second)
		}
		require.Contains(t, srv.SessionIDs(), a.ID(), "heard every 3s")
		rec.take()
		time.Sleep(4 * time.Second)
		synctest.Wait()
		require.NotContains(t, srv.SessionIDs(), a.ID())
		require.Equal(t, []string{"closed zk: session has expired"}, rec.take())
	})
}

func TestPausedSessionExpiresAndLearnsOnResume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{TickTime: time.Second})
		defer srv.Close()
		a, rec := open(t, srv, 4*time.Second)
		ctl := srv.Control(a.ID())
		ctl.Pause()
		require.True(t, a.Paused())
		time.Sleep(3 * time.Second)
		require.NoError(t, ctl.Resume(), "resumed in time")
		require.False(t, a.Paused())
		ctl.Pause()
		time.Sleep(5 * time.Second)
		require.NotContains(t, srv.SessionIDs(), a.ID())
		require.Empty(t, rec.take(), "a paused client is told when it resumes")
		require.ErrorIs(t, ctl.Resume(), zksim.ErrSessionExpired)
		require.Equal(t, []string{"closed zk: session has expired"}, rec.take())
	})
}

func TestDelayHoldsRepliesAndEventsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := zkmem.NewServer(zkmem.Options{})
		defer srv.Close()
		a, rec := open(t, srv, 10*time.Second)
		b, _ := open(t, srv, 10*time.Second)
		mkdir(t, a, "/x")
		require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpGetData, Path: "/x", Watch: true}).Err)
		rec.take()
		srv.Control(a.ID()).Delay(time.Second)
		start := time.Now()
		require.NoError(t, b.Do(&zkmem.Request{Op: zkmem.OpSetData, Path: "/x", Version: -1}).Err)
		resp := a.Do(&zkmem.Request{Op: zkmem.OpSync, Path: "/x"})
		require.NoError(t, resp.Err)
		require.Equal(t, time.Second, time.Since(start), "the reply waited for the delay")
		require.Equal(t, []string{
			fmt.Sprintf("event EventNodeDataChanged /x zxid=%d", resp.Zxid),
			fmt.Sprintf("reply sync /x err=<nil> zxid=%d", resp.Zxid),
		}, rec.take())
	})
}

func TestWhoAmIAndCloseSession(t *testing.T) {
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	a, _ := open(t, srv, 10*time.Second)
	require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpAddAuth, AuthScheme: "digest", Auth: []byte("bob:pw")}).Err)
	who := a.Do(&zkmem.Request{Op: zkmem.OpWhoAmI})
	// In the order of the server's hash set (checked on a real server by
	// zkwire's TestWhoAmIIsThePeerAddress), not the order they came in.
	require.Equal(t, []zkmem.Identity{{Scheme: "digest", ID: "bob"}, {Scheme: "ip", ID: "127.0.0.1"}}, who.Identities)
	require.NoError(t, a.Do(&zkmem.Request{Op: zkmem.OpCreate, Path: "/e", Mode: zksim.ModeEphemeral, ACL: zksim.OpenACL(), TTL: -1}).Err)
	require.NoError(t, a.Close())
	require.NotContains(t, srv.SessionIDs(), a.ID())
	b, _ := open(t, srv, 10*time.Second)
	require.Nil(t, b.Do(&zkmem.Request{Op: zkmem.OpExists, Path: "/e"}).Stat, "the ephemeral went with the session")
}

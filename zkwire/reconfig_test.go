package zkwire_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkwire"
	"github.com/zksim/zksim/zkwire/jute"
)

func strp(s string) *string { return &s }

// The error codes (KeeperException.Code) reconfig answers that jute has no
// name for.
const (
	errNewConfigNoQuorum int32 = -13
	errBadVersion        int32 = -103
)

// TestEnsembleReconfigAnswers: on a 3-member ensemble with reconfigEnabled,
// reconfig is checked in PrepRequestProcessor's order (version, the next
// configuration, at least 2 voting members, a synced quorum, and only then
// WRITE on /zookeeper/config), from clients at different addresses and
// identities, through the leader's port and a follower's alike.
func TestEnsembleReconfigAnswers(t *testing.T) {
	const superPassword = "reconf-super"
	te := zkwire.NewTestEnsemble(t, 3, zkmem.EnsembleOptions{Options: zkmem.Options{
		ReconfigEnabled: true,
		SuperDigest:     zksim.DigestID("super", superPassword),
	}}, zkwire.Options{})
	leader := te.Ensemble().Leader()
	follower := (leader + 1) % 3

	removeFollower := &jute.ReconfigRequest{LeavingServers: strp("1"), CurConfigID: -1}
	for _, tc := range []struct {
		name string
		req  *jute.ReconfigRequest
		// want[who]: anonymous from 127.0.0.2, digest user from
		// 127.0.0.1, super user from 127.0.0.2.
		want [3]int32
	}{
		// Every check before the ACL answers everyone alike.
		{"stale version", &jute.ReconfigRequest{LeavingServers: strp("1"), CurConfigID: 5}, same(errBadVersion)},
		{"leaving not a number", &jute.ReconfigRequest{LeavingServers: strp("one"), CurConfigID: -1}, same(jute.ErrMarshallingError)},
		{"joiner without '='", &jute.ReconfigRequest{JoiningServers: strp("server.4"), CurConfigID: -1}, same(jute.ErrBadArguments)},
		{"joiner without client port", &jute.ReconfigRequest{JoiningServers: strp("server.4=127.0.0.1:2888:3888"), CurConfigID: -1}, same(jute.ErrBadArguments)},
		{"two leave: one voter left", &jute.ReconfigRequest{LeavingServers: strp("1,2"), CurConfigID: -1}, same(jute.ErrBadArguments)},
		{"empty newMembers is not null", &jute.ReconfigRequest{NewMembers: strp(""), CurConfigID: -1}, same(jute.ErrBadArguments)},
		{"unknown key in newMembers", &jute.ReconfigRequest{NewMembers: strp("server.1=h:1:2;3,tickTime=2000"), CurConfigID: -1}, same(jute.ErrBadArguments)},
		{"new voters not connected", &jute.ReconfigRequest{NewMembers: strp("server.1=h:1:2;3,server.7=h:4:5;6,server.8=h:7:8;9"), CurConfigID: -1}, same(errNewConfigNoQuorum)},
		// Past the checks: WRITE on /zookeeper/config, which only the super
		// user has; a change itself is not modelled.
		{"remove a follower", removeFollower, [3]int32{errNoAuth, errNoAuth, jute.ErrUnimplemented}},
		{"null everything", &jute.ReconfigRequest{CurConfigID: -1}, [3]int32{errNoAuth, errNoAuth, jute.ErrUnimplemented}},
		{"current version", &jute.ReconfigRequest{LeavingServers: strp(""), CurConfigID: zkmem.ConfigVersion}, [3]int32{errNoAuth, errNoAuth, jute.ErrUnimplemented}},
		{"whole config", &jute.ReconfigRequest{NewMembers: strp("server.1=h:1:2;3\nserver.2=h:4:5;6\nserver.3=h:7:8:participant;9\nversion=100000000"), CurConfigID: -1}, [3]int32{errNoAuth, errNoAuth, jute.ErrUnimplemented}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, member := range []int{leader, follower} {
				clients := [3]*raw{
					dialRawFrom(t, te.Addr(member), v4Other),
					dialRawFrom(t, te.Addr(member), v4Client),
					dialRawFrom(t, te.Addr(member), v4Other),
				}
				for _, c := range clients {
					c.connect(newSession)
				}
				clients[1].addAuth("user:pw")
				clients[2].addAuth("super:" + superPassword)
				for who, c := range clients {
					h, body := c.call(7, jute.OpReconfig, tc.req)
					require.Equal(t, tc.want[who], h.Err, "member %d, client %d", member, who)
					require.Empty(t, body)
					require.NotZero(t, h.Zxid)
				}
			}
		})
	}

	t.Run("crashed follower", func(t *testing.T) {
		// Removing the one live follower leaves the leader and a crashed
		// member: no synced quorum, before any ACL check.
		te.Ensemble().Crash(3 - leader - follower)
		t.Cleanup(func() { te.Ensemble().Restart(3 - leader - follower) })
		c := dialRawFrom(t, te.Addr(leader), v4Other)
		c.connect(newSession)
		h, _ := c.call(1, jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: strp("1,2,3,4"), JoiningServers: strp("server.3=h:1:2;3"), CurConfigID: -1})
		require.Equal(t, jute.ErrBadArguments, h.Err) // one voter only
		h, _ = c.call(2, jute.OpReconfig, &jute.ReconfigRequest{LeavingServers: strp(sid(follower)), CurConfigID: -1})
		require.Equal(t, errNewConfigNoQuorum, h.Err)
	})
}

func same(code int32) [3]int32 { return [3]int32{code, code, code} }

// sid is member i's server id.
func sid(i int) string { return string(rune('1' + i)) }

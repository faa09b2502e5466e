package conformance

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// The ids the "ip" scheme accepts (IPAuthenticationProvider.isValid in
// 3.8.0: IPv4 only, numbers read by Java's Integer.parseInt), where that
// check stands among the others, and the order of the entries an "auth"
// ACL expands to.
func aclIDCases() []testCase {
	ipACL := func(perms int32, id string) []zksim.ACL {
		return []zksim.ACL{{Perms: perms, Scheme: "ip", ID: id}}
	}
	valid := []string{
		"127.0.0.1", "10.0.0.0/8", "0.0.0.0/0", "127.0.0.1/32", "255.255.255.255",
		"+127.0.0.1", "001.002.003.004", "1.2.3.4/+8", "1.2.3.4/-0", "١٢٧.0.0.1",
	}
	invalid := []string{
		"::1", "fe80::1/64", "2001:db8::/32", "::ffff:127.0.0.1", "1.2.3", "1.2.3.4.", ".1.2.3",
		"1.2.3.256", "1.2.3.-1", "1.2.3.4/33", "1.2.3.4/", "1.2.3.4/-1", "1.2.3.4/8/8",
		"a.b.c.d", "", "/8", " 1.2.3.4", "1.2.3.4 ", "1..3.4", "localhost",
	}
	return []testCase{
		{"ip-valid-ids", func(e *env) {
			for i, id := range valid {
				p := e.p(sprintf("v%d", i))
				want := append(ipACL(zksim.PermAll, id), zksim.WorldACL(zksim.PermAdmin)...)
				e.createACL(e.c, p, nil, zksim.ModePersistent, want)
				acl, _, err := e.c.GetACL(e.ctx, p)
				require.NoError(e.t, err, "getACL with ip id %q", id)
				require.Equal(e.t, want, acl, "the id is kept as given")
			}
		}},
		{"ip-invalid-ids", func(e *env) {
			e.create(e.c, e.p("n"), nil, zksim.ModePersistent)
			for _, id := range invalid {
				acl := ipACL(zksim.PermAll, id)
				_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, acl)
				e.is(err, zksim.ErrInvalidACL, "create with ip id %q", id)
				_, err = e.c.Create(e.ctx, e.p("c"), nil, zksim.ModeContainer, acl)
				e.is(err, zksim.ErrInvalidACL, "create a container with ip id %q", id)
				_, err = e.c.SetACL(e.ctx, e.p("n"), acl, -1)
				e.is(err, zksim.ErrInvalidACL, "setACL with ip id %q", id)
				_, err = e.c.Multi(e.ctx, &zksim.CreateOp{Path: e.p("m"), Mode: zksim.ModePersistent, ACL: acl})
				e.is(err, zksim.ErrInvalidACL, "create op in a multi with ip id %q", id)
				// An invalid id among valid entries spoils the whole ACL.
				_, err = e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, append(zksim.OpenACL(), acl...))
				e.is(err, zksim.ErrInvalidACL, "create with world plus ip id %q", id)
			}
			require.False(e.t, e.exists(e.c, e.p("a")))
			require.False(e.t, e.exists(e.c, e.p("m")))
		}},
		{"ip-invalid-ids-ttl", func(e *env) {
			// (Not inside a multi: go-zookeeper cannot send a TTL create
			// there.)
			e.needExtendedTypes()
			for _, id := range invalid {
				_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, ipACL(zksim.PermAll, id), time.Minute)
				e.is(err, zksim.ErrInvalidACL, "createTTL with ip id %q", id)
			}
		}},
		{"ip-invalid-before-no-node", func(e *env) {
			bad := ipACL(zksim.PermAll, "::1")
			_, err := e.c.Create(e.ctx, e.p("missing", "a"), nil, zksim.ModePersistent, bad)
			e.is(err, zksim.ErrInvalidACL, "create under a missing parent with an IPv6 id")
			_, err = e.c.SetACL(e.ctx, e.p("missing"), bad, -1)
			e.is(err, zksim.ErrInvalidACL, "setACL of a missing node with an IPv6 id")
			_, err = e.c.Multi(e.ctx, &zksim.CreateOp{Path: e.p("missing", "a"), Mode: zksim.ModePersistent, ACL: bad})
			e.is(err, zksim.ErrInvalidACL, "create op in a multi under a missing parent with an IPv6 id")
			good := ipACL(zksim.PermAll, "10.0.0.0/8")
			_, err = e.c.Create(e.ctx, e.p("missing", "a"), nil, zksim.ModePersistent, good)
			e.is(err, zksim.ErrNoNode, "create under a missing parent with a valid ip id")
			_, err = e.c.SetACL(e.ctx, e.p("missing"), good, -1)
			e.is(err, zksim.ErrNoNode, "setACL of a missing node with a valid ip id")
		}},
		{"ip-ids-grant-by-mask", func(e *env) {
			// The client connects from 127.0.0.1.
			for i, c := range []struct {
				id    string
				reads bool
			}{
				{"127.0.0.1", true}, {"127.0.0.0/8", true}, {"127.0.0.0/31", true}, {"127.0.0.2/31", false},
				{"10.0.0.0/8", false}, {"0.0.0.0/0", true}, {"127.0.0.2", false}, {"127.1.2.3/8", true},
				{"١٢٧.0.0.1", true}, {"+127.0.0.1/+32", true},
			} {
				p := e.p(sprintf("g%d", i))
				e.createACL(e.c, p, []byte("x"), zksim.ModePersistent, append(ipACL(zksim.PermRead, c.id), zksim.WorldACL(zksim.PermAdmin)...))
				_, _, err := e.c.Get(e.ctx, p)
				if c.reads {
					require.NoError(e.t, err, "get with ip id %q", c.id)
				} else {
					e.is(err, zksim.ErrNoAuth, "get with ip id %q", c.id)
				}
			}
		}},
		{"auth-expands-in-hash-order", func(e *env) {
			// The session's identities are a hash set: the expansion comes
			// in its order, not the order of the logins, and a repeated
			// login adds nothing.
			creds := []string{"alice:a", "bob:b", "carol:c", "dave:d", "erin:e", "alice:a", "frank:f"}
			for _, c := range creds {
				require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte(c)))
			}
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.CreatorACL(zksim.PermAll))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, authACL(zksim.PermAll, creds...), acl)
			_, err = e.c.SetACL(e.ctx, e.p("a"), append(zksim.WorldACL(zksim.PermRead), zksim.CreatorACL(zksim.PermRead|zksim.PermAdmin)...), -1)
			require.NoError(e.t, err)
			acl, _, err = e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, append(zksim.WorldACL(zksim.PermRead), authACL(zksim.PermRead|zksim.PermAdmin, creds...)...), acl)
		}},
		{"auth-expansion-keeps-duplicates", func(e *env) {
			// Duplicates are dropped from the request before the expansion,
			// not after: an explicit entry equal to an expanded one stays.
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("bob:b")))
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("alice:a")))
			explicit := zksim.DigestACL(zksim.PermAll, "alice", "a")
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, append(append(zksim.CreatorACL(zksim.PermAll), explicit...), zksim.CreatorACL(zksim.PermAll)...))
			acl, _, err := e.c.GetACL(e.ctx, e.p("a"))
			require.NoError(e.t, err)
			require.Equal(e.t, append(authACL(zksim.PermAll, "bob:b", "alice:a"), explicit...), acl)
		}},
	}
}

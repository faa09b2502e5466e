package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// SuperPassword is the password of the super user the "auth" cases
// authenticate as. They run against a server whose superDigest
// (zookeeper.DigestAuthenticationProvider.superDigest, Facts.SuperDigest)
// is zksim.DigestID("super", SuperPassword), and skip on another.
const SuperPassword = "zksim-conformance"

func (e *env) needSuperDigest() {
	e.t.Helper()
	if e.facts().SuperDigest != zksim.DigestID("super", SuperPassword) {
		e.t.Skipf("backend %s: Facts.SuperDigest is %q; the case needs zksim.DigestID(\"super\", conformance.SuperPassword)", e.b.Name, e.facts().SuperDigest)
	}
}

func (e *env) needSASL(configured bool) {
	e.t.Helper()
	if (e.facts().SASLUsers != nil) != configured {
		e.t.Skipf("backend %s: Facts.SASLUsers set is %v; the case checks a server with SASL configured %v (a JAAS file and the SASL auth provider)",
			e.b.Name, e.facts().SASLUsers != nil, configured)
	}
}

// authCases: the superDigest and the ids the "sasl" scheme accepts (SASL
// logins themselves go over the wire's SASL request, which zksim.Conn does
// not send: package zkwire checks them against a real server).
func authCases() []testCase {
	sasl := func(perms int32, id string) zksim.ACL { return zksim.ACL{Perms: perms, Scheme: "sasl", ID: id} }
	return []testCase{
		{"super-digest-passes-every-acl", func(e *env) {
			e.needSuperDigest()
			require.NoError(e.t, e.c.AddAuth(e.ctx, "digest", []byte("u:p")))
			locked := []zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: zksim.DigestID("u", "p")}}
			e.createACL(e.c, e.p("locked"), []byte("u"), zksim.ModePersistent, locked)
			anon := e.connect()
			_, _, err := anon.Get(e.ctx, e.p("locked"))
			e.is(err, zksim.ErrNoAuth, "an anonymous read")

			root := e.connect()
			require.NoError(e.t, root.AddAuth(e.ctx, "digest", []byte("super:"+SuperPassword)))
			require.Equal(e.t, []byte("u"), e.data(root, e.p("locked")))
			e.set(root, e.p("locked"), []byte("super"))
			e.create(root, e.p("locked", "c"), nil, zksim.ModePersistent)
			acl, _, err := root.GetACL(e.ctx, e.p("locked"))
			require.NoError(e.t, err)
			require.Equal(e.t, locked, acl)
			_, err = root.SetACL(e.ctx, e.p("locked"), []zksim.ACL{{Perms: zksim.PermRead, Scheme: "digest", ID: zksim.DigestID("nobody", "x")}}, -1)
			require.NoError(e.t, err, "setACL by super")
			e.delete(root, e.p("locked", "c"))
			require.Equal(e.t, []byte("super"), e.data(root, e.p("locked")))
			_, _, err = e.c.Get(e.ctx, e.p("locked"))
			e.is(err, zksim.ErrNoAuth, "the owner's read after super took the node away")
		}},
		{"super-digest-other-password", func(e *env) {
			e.needSuperDigest()
			e.createACL(e.c, e.p("locked"), nil, zksim.ModePersistent,
				[]zksim.ACL{{Perms: zksim.PermAll, Scheme: "digest", ID: zksim.DigestID("u", "p")}})
			c := e.connect()
			require.NoError(e.t, c.AddAuth(e.ctx, "digest", []byte("super:not-"+SuperPassword)))
			_, _, err := c.Get(e.ctx, e.p("locked"))
			e.is(err, zksim.ErrNoAuth, "super with another password reads")
			_, err = c.Set(e.ctx, e.p("locked"), nil, -1)
			e.is(err, zksim.ErrNoAuth, "super with another password writes")
		}},
		{"super-digest-passes-sasl-acl", func(e *env) {
			e.needSuperDigest()
			e.needSASL(true)
			e.createACL(e.c, e.p("s"), []byte("s"), zksim.ModePersistent, []zksim.ACL{sasl(zksim.PermAll, "bob")})
			_, _, err := e.c.Get(e.ctx, e.p("s"))
			e.is(err, zksim.ErrNoAuth, "an anonymous read of a sasl node")
			root := e.connect()
			require.NoError(e.t, root.AddAuth(e.ctx, "digest", []byte("super:"+SuperPassword)))
			require.Equal(e.t, []byte("s"), e.data(root, e.p("s")))
		}},
		{"sasl-ids-with-sasl", func(e *env) {
			e.needSASL(true)
			for i, id := range []string{"bob", "svc/host@REALM", "a/b/c", "x@R", ""} {
				want := []zksim.ACL{sasl(zksim.PermAll, id), zksim.WorldACL(zksim.PermRead)[0]}
				p := e.createACL(e.c, e.p(sprintf("v%d", i)), nil, zksim.ModePersistent, want)
				acl, _, err := e.c.GetACL(e.ctx, p)
				require.NoError(e.t, err)
				require.Equal(e.t, want, acl, "sasl id %q", id)
			}
			for _, id := range []string{"a@b@c", "a/b/c@R", "a@R/x"} {
				_, err := e.c.Create(e.ctx, e.p("bad"), nil, zksim.ModePersistent, []zksim.ACL{sasl(zksim.PermAll, id)})
				e.is(err, zksim.ErrInvalidACL, "create with sasl id %q", id)
			}
		}},
		{"sasl-ids-without-sasl", func(e *env) {
			e.needSASL(false)
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, []zksim.ACL{sasl(zksim.PermAll, "bob")})
			e.is(err, zksim.ErrInvalidACL, "create with a sasl ACL on a server without SASL")
		}},
	}
}

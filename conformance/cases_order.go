package conformance

import (
	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// The order in which a failing request's errors are reported, when more
// than one applies (PrepRequestProcessor; the ones marked checked were
// confirmed on a real 3.8.0).
func errorOrderCases() []testCase {
	// readOnlyChild makes p("ro") readable by anyone but nothing else, with
	// a child p("ro", "x") created before the ACL was narrowed.
	readOnlyChild := func(e *env) {
		e.create(e.c, e.p("ro"), nil, zksim.ModePersistent)
		e.create(e.c, e.p("ro", "x"), nil, zksim.ModePersistent)
		_, err := e.c.SetACL(e.ctx, e.p("ro"), zksim.ReadACL(), -1)
		require.NoError(e.t, err)
	}
	return []testCase{
		{"create-invalid-acl-before-no-node", func(e *env) {
			// checked
			_, err := e.c.Create(e.ctx, e.p("missing", "a"), nil, zksim.ModePersistent, nil)
			e.is(err, zksim.ErrInvalidACL, "create with an empty ACL under a missing parent")
		}},
		{"create-invalid-acl-before-node-exists", func(e *env) {
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			_, err := e.c.Create(e.ctx, e.p("a"), nil, zksim.ModePersistent, nil)
			e.is(err, zksim.ErrInvalidACL, "create an existing node with an empty ACL")
		}},
		{"create-invalid-acl-before-no-auth", func(e *env) {
			readOnlyChild(e)
			_, err := e.c.Create(e.ctx, e.p("ro", "y"), nil, zksim.ModePersistent, nil)
			e.is(err, zksim.ErrInvalidACL, "create with an empty ACL under a parent without CREATE")
		}},
		{"create-no-auth-before-node-exists", func(e *env) {
			// checked
			readOnlyChild(e)
			_, err := e.c.Create(e.ctx, e.p("ro", "x"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrNoAuth, "create an existing child of a parent without CREATE")
		}},
		{"create-no-auth-before-no-children-for-ephemerals", func(e *env) {
			e.createACL(e.c, e.p("e"), nil, zksim.ModeEphemeral, zksim.ReadACL())
			_, err := e.c.Create(e.ctx, e.p("e", "a"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrNoAuth, "create under an ephemeral without CREATE")
		}},
		{"create-node-exists-before-no-children-for-ephemerals", func(e *env) {
			// checked: an ephemeral's own path is taken, its children not
			// allowed; NodeExists is reported for the path first.
			e.create(e.c, e.p("e"), nil, zksim.ModeEphemeral)
			_, err := e.c.Create(e.ctx, e.p("e"), nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrNodeExists, "create an existing ephemeral")
		}},
		{"create-bad-ttl-before-invalid-acl", func(e *env) {
			e.needExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("t"), nil, zksim.ModePersistentWithTTL, nil, 0)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with ttl 0 and an empty ACL")
		}},
		{"create-bad-ttl-before-no-node", func(e *env) {
			e.needExtendedTypes()
			_, err := e.c.CreateTTL(e.ctx, e.p("missing", "t"), nil, zksim.ModePersistentWithTTL, zksim.OpenACL(), 0)
			e.is(err, zksim.ErrBadArguments, "CreateTTL with ttl 0 under a missing parent")
		}},
		{"delete-parent-missing-no-node", func(e *env) {
			e.is(e.c.Delete(e.ctx, e.p("missing", "a"), -1), zksim.ErrNoNode, "delete under a missing parent")
		}},
		{"delete-no-auth-before-no-node", func(e *env) {
			// checked: the parent's DELETE permission is checked before
			// the node is looked up.
			readOnlyChild(e)
			e.is(e.c.Delete(e.ctx, e.p("ro", "missing"), -1), zksim.ErrNoAuth, "delete a missing child of a parent without DELETE")
		}},
		{"delete-no-auth-before-bad-version", func(e *env) {
			readOnlyChild(e)
			e.is(e.c.Delete(e.ctx, e.p("ro", "x"), 7), zksim.ErrNoAuth, "delete with a bad version under a parent without DELETE")
		}},
		{"delete-no-node-before-bad-version", func(e *env) {
			e.is(e.c.Delete(e.ctx, e.p("missing"), 7), zksim.ErrNoNode, "delete a missing node with version 7")
		}},
		{"delete-bad-version-before-not-empty", func(e *env) {
			// checked
			e.create(e.c, e.p("a"), nil, zksim.ModePersistent)
			e.create(e.c, e.p("a", "b"), nil, zksim.ModePersistent)
			e.is(e.c.Delete(e.ctx, e.p("a"), 5), zksim.ErrBadVersion, "delete a non-empty node with a bad version")
		}},
		{"set-no-node-before-bad-version", func(e *env) {
			_, err := e.c.Set(e.ctx, e.p("missing"), nil, 7)
			e.is(err, zksim.ErrNoNode, "set a missing node with version 7")
		}},
		{"set-no-auth-before-bad-version", func(e *env) {
			// checked
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.ReadACL())
			_, err := e.c.Set(e.ctx, e.p("a"), nil, 7)
			e.is(err, zksim.ErrNoAuth, "set with a bad version without WRITE")
		}},
		{"set-acl-invalid-acl-before-no-node", func(e *env) {
			// checked
			_, err := e.c.SetACL(e.ctx, e.p("missing"), nil, -1)
			e.is(err, zksim.ErrInvalidACL, "setACL with an empty ACL on a missing node")
		}},
		{"set-acl-invalid-acl-before-no-auth", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.ReadACL())
			_, err := e.c.SetACL(e.ctx, e.p("a"), nil, -1)
			e.is(err, zksim.ErrInvalidACL, "setACL with an empty ACL without ADMIN")
		}},
		{"set-acl-no-node-before-bad-version", func(e *env) {
			_, err := e.c.SetACL(e.ctx, e.p("missing"), zksim.OpenACL(), 7)
			e.is(err, zksim.ErrNoNode, "setACL on a missing node with version 7")
		}},
		{"set-acl-no-auth-before-bad-version", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.ReadACL())
			_, err := e.c.SetACL(e.ctx, e.p("a"), zksim.OpenACL(), 7)
			e.is(err, zksim.ErrNoAuth, "setACL with a bad version without ADMIN")
		}},
		{"check-no-node-before-bad-version", func(e *env) {
			_, err := e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("missing"), Version: 7})
			e.is(err, zksim.ErrNoNode, "check a missing node with version 7")
		}},
		{"check-no-auth-before-bad-version", func(e *env) {
			e.createACL(e.c, e.p("a"), nil, zksim.ModePersistent, zksim.WorldACL(zksim.PermWrite))
			_, err := e.c.Multi(e.ctx, &zksim.CheckOp{Path: e.p("a"), Version: 7})
			e.is(err, zksim.ErrNoAuth, "check with a bad version without READ")
		}},
	}
}

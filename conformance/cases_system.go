package conformance

import (
	"path"

	"github.com/stretchr/testify/require"

	"github.com/zksim/zksim"
)

// The tree a server starts with: /, /zookeeper, /zookeeper/quota and
// /zookeeper/config (checked on a real 3.8.0). The suite never changes
// their data or ACLs, so it can share a server with other tests; it only
// creates and deletes one node under /zookeeper.
func systemCases() []testCase {
	return []testCase{
		{"root-has-zookeeper-child", func(e *env) {
			require.Contains(e.t, e.children(e.c, "/"), "zookeeper")
		}},
		{"root-stat", func(e *env) {
			st := e.stat(e.c, "/")
			require.Zero(e.t, st.Czxid, "czxid of /: %v", st)
			require.Zero(e.t, st.Ctime, "ctime of /: %v", st)
			require.Zero(e.t, st.EphemeralOwner, "owner of /: %v", st)
			require.Zero(e.t, st.Aversion, "aversion of /: %v", st)
		}},
		{"root-acl-open", func(e *env) {
			acl, _, err := e.c.GetACL(e.ctx, "/")
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
		}},
		{"zookeeper-node", func(e *env) {
			data, st, err := e.c.Get(e.ctx, "/zookeeper")
			require.NoError(e.t, err)
			require.Empty(e.t, data)
			require.Zero(e.t, st.Czxid, "czxid: %v", st)
			require.Zero(e.t, st.Ctime, "ctime: %v", st)
			require.Zero(e.t, st.EphemeralOwner, "owner: %v", st)
			require.Zero(e.t, st.DataLength, "dataLength: %v", st)
			names := e.children(e.c, "/zookeeper")
			require.Subset(e.t, names, []string{"config", "quota"})
			require.Equal(e.t, int32(len(names)), st.NumChildren)
			acl, _, err := e.c.GetACL(e.ctx, "/zookeeper")
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
		}},
		{"zookeeper-quota-node", func(e *env) {
			st := e.stat(e.c, "/zookeeper/quota")
			require.Zero(e.t, st.Czxid, "czxid: %v", st)
			require.Zero(e.t, st.EphemeralOwner, "owner: %v", st)
			acl, _, err := e.c.GetACL(e.ctx, "/zookeeper/quota")
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.OpenACL(), acl)
		}},
		{"zookeeper-config-read-only", func(e *env) {
			// A real 3.8 server creates /zookeeper/config readable by
			// anyone and writable by no one, with aversion -1 (checked).
			st := e.stat(e.c, "/zookeeper/config")
			require.Zero(e.t, st.Czxid, "czxid: %v", st)
			acl, ast, err := e.c.GetACL(e.ctx, "/zookeeper/config")
			require.NoError(e.t, err)
			require.Equal(e.t, zksim.ReadACL(), acl)
			require.Equal(e.t, int32(-1), ast.Aversion, "aversion of /zookeeper/config")
			_, err = e.c.Set(e.ctx, "/zookeeper/config", []byte("x"), -1)
			e.is(err, zksim.ErrNoAuth, "set /zookeeper/config")
		}},
		{"delete-root-bad-arguments", func(e *env) {
			e.is(e.c.Delete(e.ctx, "/", -1), zksim.ErrBadArguments, "delete /")
		}},
		{"delete-zookeeper-bad-arguments", func(e *env) {
			e.is(e.c.Delete(e.ctx, "/zookeeper", -1), zksim.ErrBadArguments, "delete /zookeeper")
			require.True(e.t, e.exists(e.c, "/zookeeper"))
		}},
		{"delete-zookeeper-quota-bad-arguments", func(e *env) {
			e.is(e.c.Delete(e.ctx, "/zookeeper/quota", -1), zksim.ErrBadArguments, "delete /zookeeper/quota")
			require.True(e.t, e.exists(e.c, "/zookeeper/quota"))
		}},
		{"delete-zookeeper-config-bad-arguments", func(e *env) {
			e.is(e.c.Delete(e.ctx, "/zookeeper/config", -1), zksim.ErrBadArguments, "delete /zookeeper/config")
			require.True(e.t, e.exists(e.c, "/zookeeper/config"))
		}},
		{"create-under-zookeeper-allowed", func(e *env) {
			p := "/zookeeper" + path.Dir(e.root) // "/zookeeper/conformance-<run id>"
			e.create(e.c, p, []byte("x"), zksim.ModePersistent)
			require.Contains(e.t, e.children(e.c, "/zookeeper"), p[len("/zookeeper/"):])
			require.NoError(e.t, e.c.Delete(e.ctx, p, -1), "delete %s", p)
		}},
		{"create-root-node-exists", func(e *env) {
			_, err := e.c.Create(e.ctx, "/", nil, zksim.ModePersistent, zksim.OpenACL())
			e.is(err, zksim.ErrNodeExists, "create /")
		}},
	}
}

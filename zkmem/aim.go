package zkmem

import (
	"fmt"
	"strings"
)

// Aim picks the requests of a session that an armed fault hits (see
// Control.Arm): those with Op, on a path under Path, the next Count of
// them.
type Aim struct {
	// Op is the op the request must have; OpAny matches any client
	// request (ping, setWatches and closeSession are hit only when named).
	Op OpCode
	// Path, when set, is where the request must act: "/app/lock" matches
	// a request on /app/lock or on a node under it (not /app/locks), and
	// "/app/lock/" only one on a node under it — the children a lock
	// recipe creates, and not the create of /app/lock itself that a
	// client's ensure-path sends. A create's path is the one the client
	// sent (before a sequential node's suffix); a multi matches if one of
	// its ops does; a request without a path (addAuth, reconfig) never
	// matches. "" matches any request.
	Path string
	// Count is how many matching requests the fault hits, the next ones;
	// it is at least 1.
	Count int
}

// check reports what is wrong with a, naming the field.
func (a Aim) check() error {
	switch {
	case a.Path != "" && !strings.HasPrefix(a.Path, "/"):
		return fmt.Errorf("zkmem: Aim.Path %q: a path starts with /", a.Path)
	case a.Count < 1:
		return fmt.Errorf("zkmem: Aim.Count %d: a fault hits at least 1 request", a.Count)
	}
	return nil
}

// matches reports whether req is one a aims at.
func (a Aim) matches(req *Request) bool {
	if a.Op != req.Op && (a.Op != OpAny || req.Op.session()) {
		return false
	}
	if a.Path == "" {
		return true
	}
	if req.Op == OpMulti {
		for _, op := range req.Ops {
			if a.under(op.OpPath()) {
				return true
			}
		}
		return false
	}
	return a.under(req.Path)
}

// under reports whether path is a.Path, or under it (see Aim.Path).
func (a Aim) under(path string) bool {
	if path == "" {
		return false
	}
	if strings.HasSuffix(a.Path, "/") {
		return strings.HasPrefix(path, a.Path) && len(path) > len(a.Path)
	}
	return path == a.Path || strings.HasPrefix(path, a.Path+"/")
}

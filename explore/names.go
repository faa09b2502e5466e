package explore

import (
	"path"
	"regexp"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// Checks every machine gets on the names the recipes create, told by
// sim.Config.OnApply of every request the server applies (see
// world.applied).
//
// Protected names: a sequential node a recipe creates with a GUID is
// named _c_<guid>-<name>, the form Curator gives it (CreateBuilder's
// withProtection), so that the two can share a directory and each finds
// its own node after a lost reply: "_c_", then a version 4 UUID
// (java.util.UUID.randomUUID's form: 36 characters, lower-case hex,
// groups of 8-4-4-4-12, the version nibble 4 and the variant bits 10),
// then "-". Any create whose name starts with "_c_" must have that form;
// names without it (the flawed recipes' plain "lock-") are not protected
// and not checked.

// protectedName matches a protected name up to the recipe's part.
var protectedName = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-`)

// checkNames records a violation when a create of r (a create, or the
// creates of a multi) by client c has a protected name not in the
// Curator form.
func (w *world) checkNames(c *client, r *zkmem.Request) {
	check := func(p string, mode zksim.CreateMode) {
		base := path.Base(p)
		if !mode.IsSequential() || !strings.HasPrefix(base, "_c_") || protectedName.MatchString(base) {
			return
		}
		w.violate(kindProtectedName, "p%d created %s: not _c_<36-character version 4 GUID>-<name>, the protected form of Curator", c.idx, p)
	}
	switch r.Op {
	case zkmem.OpCreate:
		check(r.Path, r.Mode)
	case zkmem.OpMulti:
		for _, op := range r.Ops {
			if cr, ok := op.(*zksim.CreateOp); ok {
				check(cr.Path, cr.Mode)
			}
		}
	}
}

package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zktest"
)

// caseTimeout bounds one case, including its waits for events and reaping.
const caseTimeout = 60 * time.Second

// testCase is one named behaviour check.
type testCase struct {
	name string
	run  func(e *env)
}

// group is a family of cases, run as one subtest level.
type group struct {
	name  string
	cases []testCase
}

// groups lists every case in the order the suite runs them. Cases that
// cut connections or expire sessions come last, so that the background work
// a real client does after them (a new session, a redial) cannot touch the
// zxid arithmetic of earlier cases.
func groups() []group {
	return []group{
		{"paths", pathCases()},
		{"system", systemCases()},
		{"create", createCases()},
		{"data", dataCases()},
		{"sequence", sequenceCases()},
		{"stat", statCases()},
		{"version", versionCases()},
		{"order", errorOrderCases()},
		{"zxid", zxidCases()},
		{"multi", multiCases()},
		{"sync", syncCases()},
		{"acl", aclCases()},
		{"aclids", aclIDCases()},
		{"auth", authCases()},
		{"childorder", childOrderCases()},
		{"watch", watchCases()},
		{"persistent", persistentWatchCases()},
		{"ephemerals", getEphemeralsCases()},
		{"childcount", childCountCases()},
		{"reaping", reapingCases()},
		{"payload", payloadCases()},
		{"session", sessionCases()},
		{"expiry", expiryCases()},
		{"ephemeralorder", ephemeralOrderCases()},
		{"reconnect", reconnectCases()},
	}
}

// CaseNames returns the names of every case, "group/case", in the order Run
// runs them. Each is a subtest of the test that calls Run.
func CaseNames() []string {
	var names []string
	for _, g := range groups() {
		for _, c := range g.cases {
			names = append(names, g.name+"/"+c.name)
		}
	}
	return names
}

// Run runs every case of the suite against b, each as a subtest
// group/case of t. Cases run one after another. Run fails t at once if b
// lacks a Name or a Connect func, sets only one of Disconnect and
// Reconnect, or if no session can be opened. The cases read b.Facts with
// zkmem's defaults filled in (zktest.WithDefaults).
func Run(t *testing.T, b Backend) {
	t.Helper()
	if b.Name == "" || b.Connect == nil {
		t.Fatalf("conformance: Backend needs a Name and a Connect func (got name %q, connect set %v)",
			b.Name, b.Connect != nil)
	}
	if (b.Disconnect == nil) != (b.Reconnect == nil) {
		t.Fatalf("conformance: backend %s sets only one of Disconnect and Reconnect", b.Name)
	}
	b.Facts = zktest.WithDefaults(b.Facts)
	known := make(map[string]bool)
	for _, name := range CaseNames() {
		known[name] = true
	}
	for name := range b.Skip {
		if !known[name] {
			t.Fatalf("conformance: backend %s: Skip names %q, which is not a case", b.Name, name)
		}
	}
	var only map[string]bool
	if b.Only != nil {
		only = make(map[string]bool)
		for _, name := range b.Only {
			if !known[name] {
				t.Fatalf("conformance: backend %s: Only names %q, which is not a case", b.Name, name)
			}
			only[name] = true
		}
	}
	selected := func(name string) bool { return only == nil || only[name] }
	suiteRoot := "/conformance-" + randomID()
	createSuiteRoot(t, &b, suiteRoot)
	for _, g := range groups() {
		if !slices.ContainsFunc(g.cases, func(c testCase) bool { return selected(g.name + "/" + c.name) }) {
			continue
		}
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				if !selected(g.name + "/" + c.name) {
					continue
				}
				t.Run(c.name, func(t *testing.T) {
					if reason, ok := b.Skip[g.name+"/"+c.name]; ok {
						t.Skipf("backend %s cannot run this case: %s", b.Name, reason)
					}
					e := newEnv(t, &b, suiteRoot+"/"+g.name+"."+c.name)
					c.run(e)
				})
			}
		})
	}
}

func createSuiteRoot(t *testing.T, b *Backend, root string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), caseTimeout)
	defer cancel()
	c, err := b.Connect(ctx, b.Facts.MaxSessionTimeout)
	if err != nil {
		t.Fatalf("conformance: backend %s: connect: %v", b.Name, err)
	}
	defer c.Close()
	if _, err := c.Create(ctx, root, nil, zksim.ModePersistent, zksim.OpenACL()); err != nil {
		t.Fatalf("conformance: backend %s: create the suite root %s: %v", b.Name, root, err)
	}
}

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

package clients_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
	"github.com/zksim/zksim/zkserver"
	"github.com/zksim/zksim/zkwire"
)

const (
	// kazooSASLFile is the kazoo SASL program, relative to the package
	// directory; saslJAAS the JAAS file both servers read.
	kazooSASLFile = "testdata/kazoo_sasl_test.py"
	saslJAAS      = "testdata/jaas.conf"
)

var kazooSASLTestDef = regexp.MustCompile(`(?m)^    def (test_\w+)\(self\):`)

// needPureSASL checks that Debian's python3 imports pure-sasl, which kazoo
// needs for SASL.
func needPureSASL(t testing.TB) {
	t.Helper()
	if err := exec.Command(python, "-c", "import puresasl.client").Run(); err != nil {
		need(t, "pure-sasl", fmt.Errorf("%s cannot import puresasl (apt-get install python3-pure-sasl): %v", python, err))
	}
}

// TestSASLClients runs kazoo clients authenticating with SASL DIGEST-MD5
// (right password, wrong password, unknown user) and the superDigest, and
// zkCli.sh (the Java client) with a JAAS Client section, against the wire
// server configured from testdata/jaas.conf, as `zksim serve -jaas
// testdata/jaas.conf -superDigest ...` is, and against a real ZooKeeper
// given the same file and the SASL authentication provider.
func TestSASLClients(t *testing.T) {
	needKazoo(t)
	needPureSASL(t)
	needZkCli(t)
	jaas, err := filepath.Abs(saslJAAS)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(jaas)
	if err != nil {
		t.Fatal(err)
	}
	users, err := zkmem.ParseJAAS(data, "Server")
	if err != nil {
		t.Fatal(err)
	}
	superDigest := zksim.DigestID("super", "sekret")
	src, err := os.ReadFile(kazooSASLFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range kazooSASLTestDef.FindAllStringSubmatch(string(src), -1) {
		names = append(names, m[1])
	}
	if len(names) < 3 {
		t.Fatalf("%s: found the test methods %v, want at least 3", kazooSASLFile, names)
	}
	for _, bk := range []struct {
		name  string
		start func(t *testing.T) backend
	}{
		{"zkwire", func(t *testing.T) backend {
			srv := zkwire.NewTestServer(t, zkwire.WithZKOptions(zkmem.Options{SASLUsers: users, SuperDigest: superDigest}))
			return backend{name: "zkwire", addr: srv.Addr(), control: srv.ControlURL()}
		}},
		{"zookeeper", func(t *testing.T) backend {
			srv := zkserver.Start(t,
				zkserver.WithSystemProperty("java.security.auth.login.config", jaas),
				zkserver.WithSystemProperty("zookeeper.authProvider.1", "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"),
				zkserver.WithSuperDigest(superDigest))
			return backend{name: "zookeeper", addr: srv.Addr()}
		}},
	} {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.start(t)
			for _, name := range names {
				if kazooNeedsControl(name) && b.control == "" {
					t.Logf("%s not run: it needs a control endpoint", name)
					continue
				}
				t.Run("kazoo/"+strings.TrimPrefix(name, "test_"), func(t *testing.T) {
					r := run(t, b, "testdata", python, "-W", "ignore::DeprecationWarning",
						"kazoo_sasl_test.py", "-v", "KazooSASL."+name)
					ran := unittestRan.FindStringSubmatch(r.stderr)
					sum := unittestSummary.FindStringSubmatch(r.stderr)
					if r.code != 0 || sum == nil || sum[1] != "OK" || sum[2] != "" || ran == nil || ran[1] != "1" {
						t.Fatalf("kazoo %s against %s: want 1 test run, OK:\n%s", name, b.name, r)
					}
				})
			}
			t.Run("zkcli", func(t *testing.T) { zkCliSASL(t, b) })
		})
	}
}

// zkCliSASL runs zkCli.sh's whoami as bob, with bob's password and a wrong
// one, from a JAAS Client section.
func zkCliSASL(t *testing.T, b backend) {
	for _, tc := range []struct {
		password string
		event    string   // the watcher's line, printed by another thread than whoami's
		want     []string // whoami's lines, in order
	}{
		{"bobpw", "WatchedEvent state:SaslAuthenticated type:None path:null", []string{"Auth scheme: User", "sasl: bob", "ip: 127.0.0.1"}},
		{"wrong", "WatchedEvent state:AuthFailed type:None path:null", []string{"Auth scheme: User"}},
	} {
		jaas := filepath.Join(t.TempDir(), "client.jaas")
		conf := "Client {\n    org.apache.zookeeper.server.auth.DigestLoginModule required\n" +
			"    username=\"bob\"\n    password=\"" + tc.password + "\";\n};\n"
		if err := os.WriteFile(jaas, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		cb := b
		cb.extraEnv = append(slices.Clone(b.extraEnv), "CLIENT_JVMFLAGS=-Djava.security.auth.login.config="+jaas)
		r := cli(t, cb, "whoami")
		got := lines(r.stdout + r.stderr)
		i := 0
		for _, l := range got {
			if i < len(tc.want) && l == tc.want[i] {
				i++
			}
		}
		if i != len(tc.want) || !slices.Contains(got, tc.event) || slices.Contains(got, "sasl: bob") != (tc.password == "bobpw") {
			t.Errorf("zkCli.sh whoami as bob with %q against %s: want the line %q and the lines %q in order:\n%s", tc.password, b.name, tc.event, tc.want, r)
		}
	}
}

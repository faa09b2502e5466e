package zkserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zksim/zksim/zkmem"
)

// The JAAS file a server is given holds the users, quoted so that the
// server reads back each password as given.
func TestWriteJAAS(t *testing.T) {
	dir := t.TempDir()
	users := map[string]string{"bob": "bobpw", "carol": "pa\"ss\\word\twith\nbreaks", "x.y-z_$*9": ""}
	props, err := writeJAAS(dir, users)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "jaas.conf")
	want := []string{
		"-Djava.security.auth.login.config=" + path,
		"-Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
	}
	if strings.Join(props, " ") != strings.Join(want, " ") {
		t.Fatalf("properties %q", props)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, err := zkmem.ParseJAAS(data, "Server")
	if err != nil {
		t.Fatalf("%v in\n%s", err, data)
	}
	if len(got) != len(users) {
		t.Fatalf("read back %q from\n%s", got, data)
	}
	for name, pw := range users {
		if got[name] != pw {
			t.Errorf("%s: read back %q, want %q", name, got[name], pw)
		}
	}
	for _, bad := range []string{"", "a b", "a=b", "ü", "a;b"} {
		if _, err := writeJAAS(dir, map[string]string{bad: "pw"}); err == nil || !strings.Contains(err.Error(), "SASL user name") {
			t.Errorf("user name %q: %v", bad, err)
		}
	}
}

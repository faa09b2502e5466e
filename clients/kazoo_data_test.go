package clients_test

import (
	"strings"
	"testing"
)

// kazooDataFile prints what kazoo sees of null and empty data, relative to
// the package directory.
const kazooDataFile = "kazoo_data.py"

// TestKazooEmptyData runs kazoo's Counter, TreeCache and DataWatch, and
// plain gets, on nodes holding empty (b"") and null (None) data against
// the wire server and a real ZooKeeper, and requires the same transcript
// from both: the wire server keeps null apart from empty as the real
// server does, where kazoo once read every empty node back as None and its
// Counter failed on it.
func TestKazooEmptyData(t *testing.T) {
	needKazoo(t)
	out := map[string]string{}
	forEachBackend(t, func(t *testing.T, b backend) {
		r := run(t, b, "testdata", python, "-W", "ignore::DeprecationWarning", kazooDataFile)
		if r.code != 0 || !strings.HasSuffix(r.stdout, "== done\n") {
			t.Fatalf("%s against %s failed:\n%s", kazooDataFile, b.name, r)
		}
		// Facts that hold on the real server, checked on both.
		for _, want := range []string{
			"get default b'' dataLength 0\n", "get none None dataLength 0\n",
			"fresh counter 0\n", "node set to b'' 0\n", "counter on a null node raises AttributeError\n",
			"DataWatch after create b'' -> (b'', 0)\n", "DataWatch after set None -> (None, 3)\n",
			"cache ~/tree/a b'' version 0\n", "cache after set c b'' b''\n",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("%s against %s: no line %q in\n%s", kazooDataFile, b.name, want, r.stdout)
			}
		}
		out[b.name] = r.stdout
	})
	if real, ok := out["zookeeper"]; ok && out["zkwire"] != real {
		t.Errorf("kazoo saw different data:\n--- zkwire\n%s--- zookeeper\n%s", out["zkwire"], real)
	}
}

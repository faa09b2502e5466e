package sim_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/sim"
)

// Each client draws from its own stream, seeded from the World's seed and
// its index: the same in every World of that seed, whatever else drew.
func TestClientRandStreams(t *testing.T) {
	draw := func(seed uint64, first int) [2][]byte {
		var out [2][]byte
		sim.Test(t, sim.Config{Seed: seed, Clients: 2}, func(t *testing.T, w *sim.World) {
			// Draw in a different order of clients: streams are per client.
			for _, i := range []int{first, 1 - first} {
				b := make([]byte, 16)
				if _, err := io.ReadFull(zksim.RandReader(w.Conn(i)), b); err != nil {
					t.Fatal(err)
				}
				out[i] = b
			}
		})
		return out
	}
	a, b, c := draw(7, 0), draw(7, 1), draw(8, 0)
	if !bytes.Equal(a[0], b[0]) || !bytes.Equal(a[1], b[1]) {
		t.Errorf("seed 7 drew %x then %x", a, b)
	}
	if bytes.Equal(a[0], a[1]) || bytes.Equal(a[0], c[0]) {
		t.Errorf("streams not distinct: %x, seed 8 %x", a, c)
	}
}

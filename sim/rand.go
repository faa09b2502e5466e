package sim

import (
	"io"
	"math/rand/v2"
	"sync"

	"github.com/zksim/zksim"
)

var _ zksim.RandSource = (*Conn)(nil)

// RandReader implements zksim.RandSource: the client's own stream of
// random bytes, seeded from the World's seed and the client's index, from
// which recipes draw their GUIDs. Each client having its own stream, the
// names a client draws do not depend on the order in which the Go
// scheduler runs the goroutines of different clients: a seed replays the
// same names under -race and any GOMAXPROCS. (Two goroutines of one client
// drawing at once still race with each other.)
func (c *Conn) RandReader() io.Reader { return &c.s.rand }

// clientRand is a client's random stream: ChaCha8 under a mutex.
type clientRand struct {
	seed [32]byte
	mu   sync.Mutex
	src  *rand.ChaCha8
}

// init seeds r from the World's seed and the client's index.
func (r *clientRand) init(seed uint64, idx int) {
	g := rand.New(rand.NewPCG(seed, 0xc11e_47ad^uint64(idx)))
	for i := 0; i < len(r.seed); i += 8 {
		v := g.Uint64()
		for j := range 8 {
			r.seed[i+j] = byte(v >> (8 * j))
		}
	}
	r.src = rand.NewChaCha8(r.seed)
}

// Read fills p; it never fails.
func (r *clientRand) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.src.Read(p)
}

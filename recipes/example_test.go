package recipes_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/zksim/zksim"
	"github.com/zksim/zksim/recipes"
	"github.com/zksim/zksim/zkmem"
)

// A recipe of one's own on the protected create: each worker registers an
// ephemeral-sequential node; the one with the lowest sequence number is the
// coordinator. A lost create reply would be recovered by GUID, not turned
// into a second registration.
func ExampleCreateProtectedEphemeralSequential() {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	defer srv.Close()

	for _, worker := range []string{"alice", "bob", "carol"} {
		conn, _ := srv.Connect()
		p, err := recipes.CreateProtectedEphemeralSequential(ctx, conn, "/workers/w-", []byte(worker), zksim.OpenACL())
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(worker, "registered:", strings.HasPrefix(p, "/workers/_c_"))
	}

	reader, _ := srv.Connect()
	names, _, _ := reader.Children(ctx, "/workers")
	// Order by sequence number, never by name: the GUID prefix is random.
	slices.SortFunc(names, func(a, b string) int {
		sa, _ := recipes.SequenceOf(a, "w-")
		sb, _ := recipes.SequenceOf(b, "w-")
		return recipes.CompareSequence(sa, sb)
	})
	first, _, _ := reader.Get(ctx, "/workers/"+names[0])
	fmt.Printf("coordinator: %s\n", first)
	// Output:
	// alice registered: true
	// bob registered: true
	// carol registered: true
	// coordinator: alice
}

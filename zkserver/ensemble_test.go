package zkserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/zksim/zksim/zkserver"
)

func TestEnsembleStarts(t *testing.T) {
	e := zkserver.StartEnsemble(t, 3)
	t.Logf("startup %v", e.StartupTime())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	leader, err := e.Leader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("leader %d", leader)
}

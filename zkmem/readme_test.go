package zkmem_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zksim/zksim"
	"github.com/zksim/zksim/zkmem"
)

// The ten-line test the README shows; kept here so it stays true.
func TestLeaderNodeGoesWithSession(t *testing.T) {
	ctx := context.Background()
	srv := zkmem.NewServer(zkmem.Options{})
	t.Cleanup(srv.Close)
	leader, _ := srv.Connect()
	follower, _ := srv.Connect()
	leader.Create(ctx, "/leader", []byte("me"), zksim.ModeEphemeral, zksim.OpenACL())
	_, _, gone, _ := follower.ExistsW(ctx, "/leader")
	srv.Control(leader.SessionID()).Expire() // the server expires the leader's session
	require.Equal(t, zksim.EventNodeDeleted, (<-gone).Type)
}

package jute

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

// TestReconfigRequestNullVersusEmpty decodes raw bytes as a Java client
// writes them: a null ustring is length -1, an empty one length 0, and the
// server reads the two differently (null NewMembers: an incremental change).
func TestReconfigRequestNullVersusEmpty(t *testing.T) {
	raw := []byte{
		0xff, 0xff, 0xff, 0xff, // joiningServers: null
		0, 0, 0, 0, // leavingServers: ""
		0, 0, 0, 1, '3', // newMembers: "3"
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // curConfigId: -1
	}
	var r ReconfigRequest
	d := NewDecoder(raw)
	r.Decode(d)
	require.NoError(t, d.Err())
	require.Zero(t, d.Len())
	require.Nil(t, r.JoiningServers)
	require.NotNil(t, r.LeavingServers)
	require.Equal(t, "", *r.LeavingServers)
	require.Equal(t, strp("3"), r.NewMembers)
	require.Equal(t, int64(-1), r.CurConfigID)

	var e Encoder
	r.Encode(&e)
	require.Equal(t, raw, e.B)
}

package gozk

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/go-zookeeper/zk"

	"github.com/zksim/zksim"
)

func TestMapErrorTable(t *testing.T) {
	for zkErr, want := range errorTable {
		got := mapError(zkErr)
		if !errors.Is(got, want) {
			t.Errorf("mapError(%v) = %v, want %v", zkErr, got, want)
		}
		if wrapped := mapError(fmt.Errorf("context: %w", zkErr)); !errors.Is(wrapped, want) {
			t.Errorf("mapError(wrapped %v) = %v, want %v", zkErr, wrapped, want)
		}
	}
}

func TestMapErrorByCode(t *testing.T) {
	for code, want := range map[int32]error{
		-2:   zksim.ErrRuntimeInconsistency,
		-5:   zksim.ErrMarshallingError,
		-6:   zksim.ErrUnimplemented,
		-7:   zksim.ErrOperationTimeout,
		-121: zksim.ErrNoWatcher,
		-125: zksim.ErrQuotaExceeded,
	} {
		// go-zookeeper's wording for a code it has no error value for.
		zkErr := fmt.Errorf("unknown error: %v", zk.ErrCode(code))
		if got := mapError(zkErr); got != want {
			t.Errorf("mapError(%q) = %v, want %v", zkErr, got, want)
		}
	}
	if got := mapError(fmt.Errorf("unknown error: %v", zk.ErrCode(-999))); zksim.CodeOf(got) != -999 {
		t.Errorf("an unnamed code maps to %v (code %d)", got, zksim.CodeOf(got))
	}
}

func TestMapErrorNetworkIsConnectionLoss(t *testing.T) {
	for _, err := range []error{io.EOF, errors.New("write tcp: broken pipe")} {
		if got := mapError(err); !errors.Is(got, zksim.ErrConnectionLoss) {
			t.Errorf("mapError(%v) = %v, want ErrConnectionLoss", err, got)
		}
	}
	if mapError(nil) != nil {
		t.Error("mapError(nil) != nil")
	}
}

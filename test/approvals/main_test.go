package approvals

import (
	"testing"

	"github.com/loadout-dev/loadout/test/agents/agenttest"
)

func TestMain(m *testing.M) { agenttest.Main(m) }

package testenv

import (
	"encoding/json"
	"testing"
)

// JSON is v marshalled by encoding/json; t fails when it cannot be.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

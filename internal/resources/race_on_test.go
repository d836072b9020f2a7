//go:build race

package resources

// raceEnabled: the race detector drops sync.Pool items at random (so
// encoding/json's pooled buffers are reallocated now and then), which moves
// an allocation measurement by more than the bound it checks.
const raceEnabled = true

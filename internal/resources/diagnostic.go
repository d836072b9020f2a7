package resources

import "fmt"

// Severity grades a Diagnostic.
type Severity string

const (
	// SeverityWarning: the resource loaded, but something about it is off
	// (rule R-SK-2 lenient mode), or a file was left out of it.
	SeverityWarning Severity = "warning"
	// SeveritySkipped: the resource was not loaded (R-SK-2), or a file of a
	// skill was too large to load; the root is usable.
	SeveritySkipped Severity = "skipped"
	// SeverityError: the resource breaks a rule that strict mode enforces; the
	// gatherer also returns an error.
	SeverityError Severity = "error"
)

// Diagnostic reports what a directory gatherer did with one file.
type Diagnostic struct {
	// File is the path of the file, as the caller passed the root directory.
	File     string
	Severity Severity
	Message  string
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
}

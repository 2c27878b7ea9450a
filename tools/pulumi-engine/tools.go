//go:build tools

// Package tools pins the Pulumi engine (CLI) that scripts/install-pulumi builds.
// It contains no upstream code: it only imports the upstream command package so
// that go.mod/go.sum record the exact module versions to build.
package tools

import (
	_ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
)

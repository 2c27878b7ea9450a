//go:build tools

// Package tools pins the Python language host that scripts/install-pulumi builds.
// No upstream code lives here, only the import of the upstream command package.
package tools

import (
	_ "github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python"
)

package systemprompt

import "math"

// OrderName names one slot of the service-owned section order table (C3).
// First-party plugins place their sections with SectionOrder(name) instead of
// literal numbers, so the layout of the prompt is decided in one place:
// cache-stable instructions first, machine-specific facts last.
type OrderName string

// Section order slots, in prompt order. The numbers are those of dsh's
// SECTION_ORDERS table; the names are ours.
const (
	OrderIdentity                  OrderName = "identity"                    // -1000, harness:identity
	OrderPersonaPrefix             OrderName = "persona-prefix"              // 0, deployment:persona-prefix
	OrderPlanPolicy                OrderName = "plan-policy"                 // 500
	OrderTeamPolicy                OrderName = "team-policy"                 // 600
	OrderPTCOnly                   OrderName = "ptc-only"                    // 800
	OrderFileReference             OrderName = "file-reference"              // 900
	OrderToolBash                  OrderName = "tool-bash"                   // 1000
	OrderToolPwsh                  OrderName = "tool-pwsh"                   // 1010
	OrderToolRead                  OrderName = "tool-read"                   // 1100
	OrderToolWrite                 OrderName = "tool-write"                  // 1200
	OrderToolEdit                  OrderName = "tool-edit"                   // 1300
	OrderToolGlob                  OrderName = "tool-glob"                   // 1400
	OrderToolGrep                  OrderName = "tool-grep"                   // 1500
	OrderToolJobs                  OrderName = "tool-jobs"                   // 1600
	OrderToolPTY                   OrderName = "tool-pty"                    // 1700
	OrderToolWebSearch             OrderName = "tool-web-search"             // 2000
	OrderToolWebFetch              OrderName = "tool-web-fetch"              // 2100
	OrderToolLSP                   OrderName = "tool-lsp"                    // 2200
	OrderToolSessionQuery          OrderName = "tool-session-query"          // 2300
	OrderToolGoal                  OrderName = "tool-goal"                   // 2400
	OrderToolWorkflow              OrderName = "tool-workflow"               // 2600
	OrderToolRalph                 OrderName = "tool-ralph"                  // 2700
	OrderToolSubagent              OrderName = "tool-subagent"               // 2800
	OrderToolReport                OrderName = "tool-report"                 // 2900
	OrderToolComputerUse           OrderName = "tool-computer-use"           // 3000
	OrderMCPServers                OrderName = "mcp-servers"                 // 3100
	OrderToolsSDK                  OrderName = "tools-sdk"                   // 5000
	OrderDeliverableFileReferences OrderName = "deliverable-file-references" // 9000
	OrderStructuredOutput          OrderName = "structured-output"           // 9900
	OrderHarnessSource             OrderName = "harness-source"              // 10000, environment-bearing tail
	OrderWebSurface                OrderName = "web-surface"                 // 10100
	OrderPersonaSuffix             OrderName = "persona-suffix"              // 10200, deployment:persona-suffix
)

// sectionOrders is the section order table. Invariant (tested): unique
// integers at least 10 apart.
var sectionOrders = map[OrderName]float64{
	OrderIdentity:                  -1000,
	OrderPersonaPrefix:             0,
	OrderPlanPolicy:                500,
	OrderTeamPolicy:                600,
	OrderPTCOnly:                   800,
	OrderFileReference:             900,
	OrderToolBash:                  1000,
	OrderToolPwsh:                  1010,
	OrderToolRead:                  1100,
	OrderToolWrite:                 1200,
	OrderToolEdit:                  1300,
	OrderToolGlob:                  1400,
	OrderToolGrep:                  1500,
	OrderToolJobs:                  1600,
	OrderToolPTY:                   1700,
	OrderToolWebSearch:             2000,
	OrderToolWebFetch:              2100,
	OrderToolLSP:                   2200,
	OrderToolSessionQuery:          2300,
	OrderToolGoal:                  2400,
	OrderToolWorkflow:              2600,
	OrderToolRalph:                 2700,
	OrderToolSubagent:              2800,
	OrderToolReport:                2900,
	OrderToolComputerUse:           3000,
	OrderMCPServers:                3100,
	OrderToolsSDK:                  5000,
	OrderDeliverableFileReferences: 9000,
	OrderStructuredOutput:          9900,
	OrderHarnessSource:             10000,
	OrderWebSurface:                10100,
	OrderPersonaSuffix:             10200,
}

// ContextOrderName names one slot of the runtime-context order table (C3).
type ContextOrderName string

// Runtime-context order slots.
const (
	ContextOrderSandboxPolicy      ContextOrderName = "sandbox-policy"      // 110
	ContextOrderApprovalPolicy     ContextOrderName = "approval-policy"     // 115
	ContextOrderSubagentDelegation ContextOrderName = "subagent-delegation" // 120
)

var contextOrders = map[ContextOrderName]float64{
	ContextOrderSandboxPolicy:      110,
	ContextOrderApprovalPolicy:     115,
	ContextOrderSubagentDelegation: 120,
}

// SectionOrder returns the order of a named section slot. An unknown name
// yields NaN, so registering a section with it fails with the usual
// "order must be a finite number" error instead of silently landing at 0.
func SectionOrder(name OrderName) float64 {
	if v, ok := sectionOrders[name]; ok {
		return v
	}
	return math.NaN()
}

// ContextOrder returns the order of a named runtime-context slot, or NaN for
// an unknown name (see SectionOrder).
func ContextOrder(name ContextOrderName) float64 {
	if v, ok := contextOrders[name]; ok {
		return v
	}
	return math.NaN()
}

package wire

// Names of the tool catalog: the short workflow a client runs on a task queue to learn the tool
// set of the workers polling it (client.ListTools).
const (
	// ToolCatalogWorkflowName is the workflow type that returns the worker's tool set: a
	// {"taskQueue":"...","tools":[ToolInfo...]} object, tools in name order.
	ToolCatalogWorkflowName = "ToolCatalogWorkflow"
	// ToolCatalogWorkflowIDPrefix prefixes the catalog workflow's ID: "toolcatalog-<task queue>".
	ToolCatalogWorkflowIDPrefix = "toolcatalog-"
)

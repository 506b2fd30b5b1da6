package devserver

import (
	_ "github.com/stretchr/testify/require"
	_ "github.com/temporalio/ui-server/v2/server"
	_ "go.temporal.io/sdk/client"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	_ "go.temporal.io/server/schema/sqlite"
	_ "go.temporal.io/server/temporal"
	_ "go.uber.org/zap"
)

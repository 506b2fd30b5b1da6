package pgstore

import (
	"context"
	"fmt"

	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // registers postgres12
	"go.temporal.io/server/tools/common/schema"
	sqltool "go.temporal.io/server/tools/sql"
)

// Temporal's embedded PostgreSQL schemas (go.temporal.io/server/schema), as temporal-sql-tool's
// --schema-name names them.
const (
	mainSchema       = "postgresql/v12/temporal"
	visibilitySchema = "postgresql/v12/visibility"
)

// adminDatabase is the database that exists in every PostgreSQL cluster; the tool connects to
// it to create the others.
const adminDatabase = "postgres"

// Setup creates the main and visibility databases of stores when missing and brings each to the
// server's current schema (see the package doc). It [Ping]s the server first, so that a
// connection or certificate failure is reported as the driver's error.
func Setup(stores Stores) error {
	if err := Ping(context.Background(), stores); err != nil {
		return err
	}
	logger := log.NewNoopLogger()
	for _, s := range []struct {
		sql    config.SQL
		schema string
	}{{stores.Main, mainSchema}, {stores.Visibility, visibilitySchema}} {
		create := s.sql
		if err := sqltool.DoCreateDatabase(&create, adminDatabase, logger); err != nil {
			return fmt.Errorf("create database %s: %w", s.sql.DatabaseName, err)
		}
		sql := s.sql
		conn, err := sqltool.NewConnection(&sql, logger)
		if err != nil {
			return fmt.Errorf("connect to %s: %w", s.sql.DatabaseName, err)
		}
		err = schema.NewSetupSchemaTask(conn, &schema.SetupConfig{InitialVersion: "0.0"}, logger).Run()
		if err == nil {
			err = schema.NewUpdateSchemaTask(conn, &schema.UpdateConfig{DBName: s.sql.DatabaseName, SchemaName: s.schema}, logger).Run()
		}
		conn.Close()
		if err != nil {
			return fmt.Errorf("schema %s in %s: %w", s.schema, s.sql.DatabaseName, err)
		}
	}
	return nil
}

package pgcatalog

import (
	"github.com/rockstream/rockstream/internal/types"
	"github.com/rockstream/rockstream/internal/zset"
)

// RoleSetting is a row of pg_db_role_setting: the session setting
// defaults ALTER ROLE ... SET and ALTER DATABASE ... SET stored for a role
// in a database. pg_roles.rolconfig and pg_user.useconfig show a role's
// entry for every database.
type RoleSetting struct {
	// Database and Role are "" for all databases or all roles.
	Database, Role string
	// Config are the settings as "name=value".
	Config []string
}

// RoleSettingsSource is a Source that has role settings.
type RoleSettingsSource interface {
	RoleSettings() []RoleSetting
}

func init() {
	pgRowBuilders["pg_catalog.pg_db_role_setting"] = pgDBRoleSettingRows
}

// roleSettings returns the Source's role settings; none when it keeps
// none.
func (c *Catalog) roleSettings() []RoleSetting {
	if s, ok := c.src.(RoleSettingsSource); ok {
		return s.RoleSettings()
	}
	return nil
}

// pgDBRoleSettingRows lists the entries of every role in all databases
// and in the current one, the only one pg_database lists.
func pgDBRoleSettingRows(c *Catalog) ([]zset.Row, error) {
	b := newRowBuilder("pg_catalog.pg_db_role_setting")
	for _, rs := range c.roleSettings() {
		var db, role uint32
		switch rs.Database {
		case "":
		case c.currentDatabase():
			db = databaseOID
		default:
			continue
		}
		if rs.Role != "" {
			role = RoleOID(rs.Role)
		}
		b.row().set("setdatabase", db).set("setrole", role).set("setconfig", configValue(rs.Config))
	}
	return b.rows, nil
}

// roleConfig returns pg_roles.rolconfig of role: its entry for all
// databases, NULL when none.
func (c *Catalog) roleConfig(role string) types.Value {
	for _, rs := range c.roleSettings() {
		if rs.Database == "" && rs.Role == role {
			return configValue(rs.Config)
		}
	}
	return types.Null
}

func configValue(config []string) types.Value {
	return aclValue(config) // a text[] of the entries
}

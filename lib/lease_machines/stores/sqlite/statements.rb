# frozen_string_literal: true

module LeaseMachines
  module Stores
    # The SQL the SQLite store sends (the store is in sqlite.rb).
    class SQLite < Store
      COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"
      LOCK_SQL = "SELECT #{COLUMNS} FROM #{TABLE} WHERE name = ?".freeze
      INSERT_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)".freeze
      UPDATE_SQL = "UPDATE #{TABLE} SET last_issued = ?2, lease_owner = ?3, lease_token = ?4, " \
                   "lease_expires_at_ns = ?5, observed_ns = ?6, " \
                   "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE name = ?1".freeze
      STATUS_SQL = "SELECT name, #{COLUMNS}, updated_at FROM #{TABLE} WHERE name = ?".freeze
      STATUSES_SQL = "SELECT name, #{COLUMNS}, updated_at FROM #{TABLE} ORDER BY name".freeze
    end
  end
end

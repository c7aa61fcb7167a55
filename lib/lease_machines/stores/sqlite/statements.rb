# frozen_string_literal: true

module LeaseMachines
  module Stores
    class SQLite < Store
      COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"
      LOCK_SQL = "SELECT #{COLUMNS} FROM #{TABLE} WHERE name = ?".freeze
      INSERT_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)".freeze
      SET_COLUMNS = "last_issued = ?2, lease_owner = ?3, lease_token = ?4, lease_expires_at_ns = ?5, observed_ns = ?6, " \
                    "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')"
      UPDATE_SQL = "UPDATE #{TABLE} SET #{SET_COLUMNS} WHERE name = ?1".freeze
      # A grant's and a release's write: the label too (?7), and the token it labels (?4).
      LABEL_COLUMNS = "#{HolderLabel::COLUMN}, #{HolderLabel::TOKEN_COLUMN}".freeze
      INSERT_LABELLED_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}, #{LABEL_COLUMNS}) " \
                            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?4)".freeze
      UPDATE_LABELLED_SQL = "UPDATE #{TABLE} SET #{SET_COLUMNS}, #{HolderLabel::COLUMN} = ?7, " \
                            "#{HolderLabel::TOKEN_COLUMN} = ?4 WHERE name = ?1".freeze
      # The compare-and-set (the row the decision was made on after the written values; `IS`: NULL-safe) and a
      # new row's create, each changing nothing when another decision got there first.
      SAME_SQL = ->(first) { COLUMNS.split(", ").each_with_index.map { |column, i| "#{column} IS ?#{first + i}" }.join(" AND ") }
      CAS_SQL = "#{UPDATE_SQL} AND #{SAME_SQL.call(7)}".freeze
      CAS_LABELLED_SQL = "#{UPDATE_LABELLED_SQL} AND #{SAME_SQL.call(8)}".freeze
      CREATE_SQL = "#{INSERT_SQL} ON CONFLICT (name) DO NOTHING".freeze
      CREATE_LABELLED_SQL = "#{INSERT_LABELLED_SQL} ON CONFLICT (name) DO NOTHING".freeze
      STATUS_COLUMNS = "name, #{COLUMNS}, updated_at, #{HolderLabel.shown_sql('')}".freeze
      STATUS_SQL = "SELECT #{STATUS_COLUMNS} FROM #{TABLE} WHERE name = ?".freeze
      STATUSES_SQL = "SELECT #{STATUS_COLUMNS} FROM #{TABLE} ORDER BY name".freeze
      STATUSES_OF_SQL = "SELECT #{STATUS_COLUMNS} FROM #{TABLE} WHERE name IN (%<names>s) ORDER BY name".freeze
      NAMES_SQL = "SELECT name FROM #{TABLE} ORDER BY name".freeze
      UNLABELLED_SQL = HolderLabel.unlabelled([STATUS_SQL, STATUSES_SQL, STATUSES_OF_SQL], "")
      LABEL_COLUMNS_SQL = "SELECT count(*), coalesce(sum(name = '#{HolderLabel::COLUMN}'), 0), " \
                          "coalesce(sum(name = '#{HolderLabel::TOKEN_COLUMN}'), 0) " \
                          "FROM pragma_table_info('#{TABLE}')".freeze
      ADD_LABEL_COLUMNS_SQL = ["ALTER TABLE #{TABLE} ADD COLUMN #{HolderLabel::COLUMN} TEXT".freeze,
                               "ALTER TABLE #{TABLE} ADD COLUMN #{HolderLabel::TOKEN_COLUMN} TEXT".freeze].freeze
    end
  end
end

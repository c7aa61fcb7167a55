# frozen_string_literal: true

require "uri"

module LeaseMachines
  # A PostgreSQL cluster of a restart test's own, which it may stop and start:
  # the cluster every other test uses is never restarted. Its port is the test
  # cluster's (DATABASE_URL) plus an offset, and its folder is named after that
  # port, so two checkouts whose test clusters differ never share one.
  module RestartCluster
    DEFAULT_PORT = 54_329

    # @param offset [Integer] distinct per test file
    # @return [Hash{String=>String}] the environment for script/postgres
    def self.environment(offset)
      base = URI(ENV.fetch("DATABASE_URL", "postgres://127.0.0.1:#{DEFAULT_PORT}")).port || DEFAULT_PORT
      port = base + offset
      { "LEASE_MACHINES_PG_PORT" => port.to_s, "LEASE_MACHINES_PG_DIR" => "/tmp/lm_restart_pg_#{port}" }.freeze
    end
  end
end

# frozen_string_literal: true

require_relative "fence_helper"
require_relative "../support/mysql_server"
require "lease_machines/fences/mysql"

module LeaseMachines
  module FenceTestHelper
    # MySQL/MariaDB: this test process's database on the test server (see
    # MySQLServer); every test uses names of its own.
    module MySQLData
      REPORTS_SQL = "CREATE TABLE IF NOT EXISTS #{REPORTS} (name VARBINARY(255) PRIMARY KEY, body TEXT NOT NULL, " \
                    "writer TEXT) ENGINE = InnoDB".freeze

      def engine = :mysql

      def fence_class = Fences::MySQL

      def setup
        super
        @url = MySQLServer.url
        @admin = MySQLServer.connect
        unless MySQLData.instance_variable_get(:@prepared)
          @admin.query(REPORTS_SQL)
          Fences::MySQL.new(@admin).setup!
          MySQLData.instance_variable_set(:@prepared, true)
        end
        @closing = []
      end

      def teardown
        @closing.each(&:close)
        @admin&.close
        super
      end

      # A Mysql2::Client for the test (closed at teardown).
      def mysql_client
        client = MySQLServer.connect
        @closing << client
        client
      end

      def quoted(value)
        "'#{@admin.escape(value.to_s)}'"
      end

      def committed_body(name)
        @admin.query("SELECT body FROM #{REPORTS} WHERE name = #{quoted(name)}", as: :array).to_a.dig(0, 0)
      end

      def committed_mark_text(resource)
        @admin.query("SELECT highest FROM lease_machines_fences WHERE resource = #{quoted(resource)}",
                     as: :array, cast: false).to_a.dig(0, 0)
      end

      def fence_rows(resource)
        @admin.query("SELECT COUNT(*) FROM lease_machines_fences WHERE resource = #{quoted(resource)}",
                     as: :array).to_a.dig(0, 0)
      end

      def driver_write(client, name, body)
        client.query("INSERT INTO #{REPORTS} (name, body) VALUES ('#{client.escape(name)}', " \
                     "'#{client.escape(body)}') ON DUPLICATE KEY UPDATE body = VALUES(body)")
        client.affected_rows
      end

      def driver_begin(client) = client.query("START TRANSACTION")

      def server_session(client) = client.thread_id

      def end_session(id) = @admin.query("KILL #{Integer(id)}")
    end
  end
end

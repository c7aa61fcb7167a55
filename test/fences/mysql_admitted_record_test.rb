# frozen_string_literal: true

require_relative "mysql_fence_helper"
# AdmittedRecordCases, the cases of bound, strict and signed row fencing.
require_relative "admitted_record_cases"

module LeaseMachines
  class AdmittedMySQLBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  # Bound, strict and signed row fencing on MySQL models (the mysql2 adapter),
  # with the store's table in the models' database.
  class AdmittedMySQLRecordTest < Minitest::Test
    include AdmittedRecordCases
    include FenceTestHelper::MySQLData

    def setup
      super
      AdmittedMySQLBase.establish_connection(@url) unless AdmittedMySQLBase.connected?
      create_table
    end

    def teardown
      @store&.close
      @signing_store&.close
      super
    end

    def base = AdmittedMySQLBase

    def token_column(table) = table.decimal(:lease_token, precision: 20, scale: 0)

    def store_class = Stores::MySQL

    def store_target = @url

    def store
      @store ||= Stores::MySQL.new(@url).tap(&:setup!)
    end
  end
end

# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines/stores/mysql"
require "lease_machines/fences/mysql"

module LeaseMachines
  # MySQL's stores and fences inspect as one short line without the URL's
  # password (the other engines: inspect_test.rb). Nothing connects.
  class MySQLInspectTest < Minitest::Test
    URL = "mysql2://app:s3cret@db.internal:3306/app"

    def test_a_store_and_a_fence_inspect_without_the_password
      assert_equal "#<LeaseMachines::Stores::MySQL mysql2://app:***@db.internal:3306/app signed>",
                   Stores::MySQL.new(URL, signing_keys: ["k" * 32]).inspect
      assert_equal "#<LeaseMachines::Fences::MySQL mysql2://app:***@db.internal:3306/app admits=any>",
                   Fences::MySQL.new(URL).inspect
    end
  end
end

# frozen_string_literal: true

require "minitest/autorun"
require "open3"
require "rbconfig"

module LeaseMachines
  # In an application, Rails is loaded before its gems (Bundler.require): then
  # `require "lease_machines"` loads the Railtie. (Without Rails it loads
  # nothing of it: test/properties/class_resolution_test.rb.)
  class RailtieTest < Minitest::Test
    LIB = File.expand_path("../../lib", __dir__)

    def test_requiring_the_gem_after_rails_loads_the_railtie
      out, err, status = Open3.capture3(RbConfig.ruby, "-I", LIB, "-e", <<~RUBY)
        require "rails"
        require "lease_machines"
        puts LeaseMachines::Rails::Railtie.superclass.name
      RUBY

      assert_predicate status, :success?, err
      assert_equal "Rails::Railtie\n", out
    end
  end
end

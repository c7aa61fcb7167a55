# frozen_string_literal: true

require_relative "web_helper"
require_relative "../support/webdriver"
require_relative "../support/rackup_server"

module LeaseMachines
  # What the browser tests share: one headless Chromium per test class
  # (test/support/webdriver.rb: this machine's chromedriver, or the one
  # LEASE_MACHINES_WEBDRIVER_URL names), the apps of test/web/browser/config.ru
  # served by rackup in processes of their own on the test's SQLite store,
  # and markup that must stay text. LEASE_MACHINES_SCREENSHOTS=DIR saves the
  # screenshots the tests take there.
  module BrowserTestHelper
    include WebTestHelper

    CONFIG_RU = File.join(__dir__, "browser", "config.ru")
    XSS_NAMES = [%(<script>window.__lm_xss = 1</script>), %(<img src=x onerror="window.__lm_xss = 2">)].freeze
    NO_XSS = "return window.__lm_xss === undefined && document.querySelectorAll('main script, td img').length === 0"

    def self.included(base)
      base.extend(ClassMethods)
    end

    # The class's browser, started on first use and quit after the run.
    module ClassMethods
      def browser
        @browser ||= WebDriver.start.tap { |browser| Minitest.after_run { browser.quit } }
      end
    end

    def setup
      super
      @servers = []
      # Not a skip: bin/setup installs them, script/matrix gives the roots the
      # host's chromedriver, and ruby34 leaves these files out (rakelib/matrix.rake).
      flunk "needs chromium, chromium-driver and ruby-rack's rackup (bin/setup)" unless WebDriver.available? &&
                                                                                        RackupServer.available?
      @browser = self.class.browser
    end

    def teardown
      @servers&.each(&:stop)
      super
    end

    private

    def log
      File.join(@dir, "gem.log")
    end

    def serve(app, env = {})
      server = RackupServer.new(CONFIG_RU, { "LM_APP" => app, "LM_STORE" => @path, "LM_LOG" => log }.merge(env))
      @servers << server
      server
    end

    def screenshot(name)
      dir = ENV.fetch("LEASE_MACHINES_SCREENSHOTS", nil)
      @browser.screenshot(File.join(dir, name)) if dir
    end
  end
end

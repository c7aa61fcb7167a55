# frozen_string_literal: true

require_relative "browser_helper"

module LeaseMachines
  # The UI in a real browser: headless Chromium (Debian's chromium and
  # chromium-driver, installed by bin/setup) driven through chromedriver,
  # the app served by WEBrick from test/web/browser/config.ru in a process
  # of its own, on the test's SQLite store. One browser for the class.
  # LEASE_MACHINES_SCREENSHOTS=DIR saves the index and a resource page as
  # PNGs there (`rake web:screenshots` writes docs/web-*.png). The Sidekiq
  # tab's: sidekiq_tab_browser_test.rb.
  class WebBrowserTest < Minitest::Test
    include BrowserTestHelper

    def setup
      super
      @lease = @store.authority("reports/nightly").acquire(owner: 7, ttl: 600).lease
      @store.authority("reports/weekly").acquire(owner: 8, ttl: 600)
      @store.authority("billing/nightly").acquire(owner: 9, now: Time.now.to_f - 40, ttl: 10)
      fence = Fences::SQLite.new(@path).setup!
      fence.guard("reports/nightly", @lease) { |_db| nil }
      fence.close
    end

    def test_list_and_filter
      ui = serve("web")
      @browser.visit(ui.url("/leases/"))
      assert_equal %w[billing/nightly reports/nightly reports/weekly], @browser.texts("td.lm-name")
      assert_equal %w[expired held held], @browser.texts("td.lm-state")
      @browser.type("#lm-match", "reports/*")
      @browser.click(".lm-filter button")
      assert_equal %w[reports/nightly reports/weekly], @browser.texts("td.lm-name")
      assert_equal ui.url("/leases/?match=reports%2F*"), @browser.current_url
      @browser.type("#lm-match", "nightly")
      @browser.click(".lm-filter button")
      assert_equal %w[billing/nightly reports/nightly], @browser.texts("td.lm-name")
    end

    def test_force_release_with_confirmation
      ui = serve("web")
      @browser.visit(ui.url("/leases/?match=reports%2Fnightly"))
      @browser.click("td.lm-name a")
      assert_equal "reports/nightly", @browser.text(@browser.find("h2.lm-title"))
      assert_match(/Highest token a guarded write showed: #{@lease.token}\./, @browser.text(@browser.find(".lm-mark")))
      @browser.click("a.lm-release")
      assert_equal "Force release reports/nightly?", @browser.text(@browser.find("h2"))
      assert @store.status("reports/nightly").held?, "the confirmation page releases nothing"
      @browser.click("form.lm-confirm button")
      assert_match(/\AReleased\./, @browser.text(@browser.find(".lm-notice")))
      assert_equal %w[free], @browser.texts("td.lm-state")
      assert_equal "force_released", @browser.texts("table.lm-events td")[1]
      screenshot("web-resource.png")
      status = @store.status("reports/nightly")
      assert_nil status.lease
      assert_equal @lease.token, status.last_issued
      assert_includes File.read(log), %(force-released from the web UI by "127.0.0.1")
    end

    def test_a_forged_post_from_another_origin_is_refused
      ui = serve("web")
      @browser.visit(ui.url("/leases/")) # the operator's browser holds the UI's CSRF cookie
      forger = serve("forger", "LM_TARGET" => ui.url("/leases/release"),
                               "LM_FIELDS" => "name=reports/nightly&token=#{@lease.token}")
      @browser.visit(forger.url("/")) # another origin: another port
      @browser.click("#go")
      assert_match(/CSRF token does not match its cookie: nothing was released/, @browser.text(@browser.find(".lm-message")))
      assert @store.status("reports/nightly").held?
    end

    def test_a_resource_named_with_markup_is_text_and_does_not_run
      XSS_NAMES.each { |name| @store.authority(name).acquire(owner: 1, ttl: 600) }
      ui = serve("web")
      @browser.visit(ui.url("/leases/"))
      assert @browser.script(NO_XSS), "nothing ran, nothing was parsed as markup"
      names = @browser.texts("td.lm-name")
      XSS_NAMES.each do |name|
        assert_includes names, name
        @browser.visit(ui.url("/leases/release?name=#{URI.encode_www_form_component(name)}"))
        assert_equal "Force release #{name}?", @browser.text(@browser.find("h2"))
        assert @browser.script(NO_XSS)
      end
    end

    def test_the_index
      %w[mailers/digest imports/catalog payments/settle].each_with_index do |name, at|
        @store.authority(name).acquire(owner: 4_211 + at, ttl: 90 + (at * 30))
      end
      @store.force_release("imports/catalog")
      ui = serve("web")
      @browser.visit(ui.url("/leases/"))
      assert_equal 6, @browser.texts("td.lm-name").size
      screenshot("web-index.png")
    end
  end
end

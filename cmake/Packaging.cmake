# `install` rules and the Debian package (docs/deploy.md):
#   cmake --install build --prefix /usr        # or: cd build && cpack -G DEB
# The package holds /usr/bin/alertd (stripped; its debug info goes to alertd-dbgsym_*.ddeb,
# linked by .gnu_debuglink/build-id), the systemd unit, the sysusers.d user, the flags file
# /etc/default/alertd (a conffile) and the example rules. Depends come from dpkg-shlibdeps.
include(GNUInstallDirs)
# `install`/cpack must not first build every test and benchmark: only what is installed.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

if(TARGET alertd)
  install(TARGETS alertd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(FILES ${ALERTD_ROOT}/deploy/alertd.service DESTINATION lib/systemd/system)
install(FILES ${ALERTD_ROOT}/deploy/debian/sysusers.conf DESTINATION lib/sysusers.d
        RENAME alertd.conf)
install(FILES ${ALERTD_ROOT}/deploy/alertd.env DESTINATION /etc/default RENAME alertd)
install(FILES ${ALERTD_ROOT}/README.md ${ALERTD_ROOT}/docs/deploy.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${ALERTD_ROOT}/deploy/examples/rules.yml
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

set(CPACK_PACKAGE_NAME alertd)
set(CPACK_PACKAGE_VENDOR "alertd")
set(CPACK_PACKAGE_CONTACT "alertd maintainers <alertd@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "alert-rule evaluation daemon, a drop-in replacement for vmalert")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Strip the binary; its DWARF goes into alertd-dbgsym (.ddeb), found by build-id.
set(CPACK_DEBIAN_DEBUGINFO_PACKAGE ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${ALERTD_ROOT}/deploy/debian/conffiles ${ALERTD_ROOT}/deploy/debian/postinst
    ${ALERTD_ROOT}/deploy/debian/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_GENERATOR DEB)
include(CPack)

// Package privilege is PostgreSQL's privilege model, as a pure
// computation: access control lists (ACLs) of objects, the roles that
// hold them, role membership, and the rules that decide who may read,
// write, grant, create roles and change them. It does no I/O; the runtime
// loads the roles and an object's owner and ACL from the catalog, asks
// this package, and stores what it returns.
//
// The model follows PostgreSQL 15 (src/backend/utils/adt/acl.c,
// catalog/aclchk.c, commands/user.c):
//
//   - An ACL is a list of items grantee=privileges/grantor, each privilege
//     optionally with its grant option (a '*' after its letter in the text
//     form). The empty grantee is PUBLIC, every role. A nil ACL means the
//     object's default (Default): the owner holds every privilege of the
//     object's kind, and for a database PUBLIC holds TEMPORARY and
//     CONNECT.
//   - A superuser passes every check. Otherwise a role's privileges on an
//     object are those granted to it, to PUBLIC, and to every role whose
//     privileges it has: a role has the privileges of the roles it is a
//     member of, through chains of memberships that pass only through
//     roles with INHERIT (Graph.HasPrivsOf). Membership without
//     inheritance (Graph.IsMemberOf) is what SET ROLE needs.
//   - The owner (and every role with its privileges) implicitly holds
//     every grant option, so it may always grant, but its privileges
//     themselves are ACL items that it may revoke from itself.
//   - GRANT records the grantor that holds the grant options: the owner
//     when the granting role has the owner's privileges, else the role
//     itself or the role through which it holds the most of them
//     (BestGrantor). Granting what one holds without grant option warns
//     (01007) and grants nothing; holding nothing at all is 42501.
//   - REVOKE removes the privileges a grantor granted; revoking a grant
//     option that the grantee used to grant others needs CASCADE, which
//     revokes those grants too, recursively (else 2BP01 "dependent
//     privileges exist").
//   - Roles (PostgreSQL 15's CREATEROLE rules, Graph.CheckCreateRole and
//     the like): only superusers create, alter or drop superusers; a role
//     with CREATEROLE creates, alters and drops the others and grants
//     membership in any non-superuser role; any other role may only
//     change its own password, and grant membership in the roles it holds
//     WITH ADMIN OPTION. Membership may not form a cycle (0LP01).
//
// Invariants: an ACL never holds two items with the same grantee and
// grantor, nor an item with no privileges; a grant option is only held
// with its privilege; every function here is deterministic in its inputs.
package privilege

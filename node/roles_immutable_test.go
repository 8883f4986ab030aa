package node

import (
	"slices"
	"testing"

	"github.com/jido-bus/jido-bus/bus"
	"github.com/jido-bus/jido-bus/projects/projectapi"
)

// TestRolesListsAreNotShared: what the role lists hand out is the
// caller's copy: a caller that changes it (here, slipping tool.call into
// the read verbs, or renaming a role) changes nothing of what the node
// grants. As exported variables, both changes took effect process-wide.
func TestRolesListsAreNotShared(t *testing.T) {
	subjects, err := bus.NewSubjects(bus.DefaultPrefix)
	if err != nil {
		t.Fatal(err)
	}
	rv := projectapi.ReadVerbs()
	rv[0] = projectapi.VerbToolCall
	roles := Roles()
	roles[0] = RoleAdmin
	perms, err := RolePermissions(RoleClient, subjects, "app")
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(perms.PublishAllow, subjects.API(projectapi.Area, projectapi.VerbToolCall)) {
		t.Fatal("a client may call tools after a caller changed the read verbs it was handed")
	}
	if Roles()[0] != RoleClient || projectapi.ReadVerbs()[0] != projectapi.VerbList {
		t.Fatalf("the lists changed: %v %v", Roles(), projectapi.ReadVerbs())
	}
	if v := projectapi.Verbs(); len(v) != 9 || !slices.Contains(v, projectapi.VerbToolCall) {
		t.Fatalf("Verbs() = %v", v)
	}
}
